// Generated from the service's OpenAPI document by scripts/sdk-types.ts: do not edit.
// Regenerate with `npm run sdk:types`; a test fails when this file differs from a fresh generation.
export type SettingsMusicGenerate =
  | {
      mode: 'generate';
      model?: 'V6' | 'V6_MINI' | 'V6_WILD';
      customMode?: false;
      songDescription: string;
      title?: never;
      style?: never;
      prompt?: never;
      instrumental?: boolean;
      vocalGender?: never;
      duration?: never;
      styleWeight?: never;
      weirdnessConstraint?: never;
      audioWeight?: number;
      persona?: string;
      voice?: string;
    }
  | {
      mode: 'generate';
      model?: 'V6' | 'V6_MINI' | 'V6_WILD';
      customMode: true;
      songDescription?: never;
      title: string;
      style: string;
      prompt?: string;
      instrumental?: boolean;
      vocalGender?: 'm' | 'f';
      duration?: number;
      styleWeight?: number;
      weirdnessConstraint?: number;
      audioWeight?: number;
      persona?: string;
      voice?: string;
    };
export type SettingsMusicCoverUpload =
  | {
      mode: 'cover_upload';
      model?: 'V6' | 'V6_MINI' | 'V6_WILD';
      /**
       * @minItems 1
       * @maxItems 1
       */
      audio: [string];
      customMode?: false;
      songDescription: string;
      title?: never;
      style?: never;
      prompt?: never;
      instrumental?: boolean;
      negativeTags?: never;
      duration?: never;
      styleWeight?: never;
      weirdnessConstraint?: never;
      audioWeight?: number;
      persona?: string;
      voice?: string;
    }
  | {
      mode: 'cover_upload';
      model?: 'V6' | 'V6_MINI' | 'V6_WILD';
      /**
       * @minItems 1
       * @maxItems 1
       */
      audio: [string];
      customMode: true;
      songDescription?: never;
      title: string;
      style: string;
      prompt?: string;
      instrumental?: boolean;
      negativeTags?: string;
      duration?: number;
      styleWeight?: number;
      weirdnessConstraint?: number;
      audioWeight?: number;
      persona?: string;
      voice?: string;
    };
export type SettingsMusicMashup =
  | {
      mode: 'mashup';
      model?: 'V6' | 'V6_MINI' | 'V6_WILD';
      /**
       * @minItems 1
       * @maxItems 1
       */
      audio: [string];
      /**
       * @minItems 1
       * @maxItems 1
       */
      audio2: [string];
      customMode?: false;
      songDescription: string;
      title?: never;
      style?: never;
      prompt?: never;
      instrumental?: boolean;
      duration?: never;
      styleWeight?: never;
      weirdnessConstraint?: never;
      audioWeight?: number;
    }
  | {
      mode: 'mashup';
      model?: 'V6' | 'V6_MINI' | 'V6_WILD';
      /**
       * @minItems 1
       * @maxItems 1
       */
      audio: [string];
      /**
       * @minItems 1
       * @maxItems 1
       */
      audio2: [string];
      customMode: true;
      songDescription?: never;
      title: string;
      style: string;
      prompt?: string;
      instrumental?: boolean;
      duration?: number;
      styleWeight?: number;
      weirdnessConstraint?: number;
      audioWeight?: number;
    };
/**
 * settings of model-3d; `task_type` selects the mode
 *
 */
export type TaskSettingsModel3D =
  | SettingsModel3DTextToModel
  | SettingsModel3DImageToModel
  | SettingsModel3DMultiviewToModel;
/**
 * settings of video; `mode` selects the mode
 *
 */
export type TaskSettingsVideo = SettingsVideoFrames | SettingsVideoReference | SettingsVideoOmni;
/**
 * settings of music; `mode` selects the mode
 *
 */
export type TaskSettingsMusic =
  | SettingsMusicGenerate
  | SettingsMusicSounds
  | SettingsMusicAddVocals
  | SettingsMusicAddInstrumental
  | SettingsMusicCoverUpload
  | SettingsMusicExtend
  | SettingsMusicReplaceUpload
  | SettingsMusicMashup;
/**
 * settings of video-elements
 *
 */
export type TaskSettingsVideoElements = SettingsVideoElementsDefault;
/**
 * settings of voice; `mode` selects the mode
 *
 */
export type TaskSettingsVoice = SettingsVoiceTextToDialogue | SettingsVoiceVoiceChange;
/**
 * settings of image
 *
 */
export type TaskSettingsImage = SettingsImageDefault;
/**
 * settings of music-styles
 *
 */
export type TaskSettingsMusicStyles = SettingsMusicStylesDefault;
/**
 * settings of video-omni
 *
 */
export type TaskSettingsVideoOmni = SettingsVideoOmniDefault;
/**
 * a model key and its settings (the JSON Schema of each mode is also in GET /v1/models)
 *
 */
export type TaskRequest =
  | TaskRequestModel3D
  | TaskRequestVideo
  | TaskRequestMusic
  | TaskRequestVideoElements
  | TaskRequestVoice
  | TaskRequestImage
  | TaskRequestMusicStyles
  | TaskRequestVideoOmni;

export interface SettingsModel3DTextToModel {
  task_type: 'text_to_model';
  model_version?: 'v3.1-20260211' | 'v3.0-20250812' | 'v2.5-20250123' | 'P1-20260311';
  texture?: boolean;
  pbr?: boolean;
  texture_quality?: 'standard' | 'detailed';
  geometry_quality?: 'standard' | 'detailed';
  face_limit?: number;
  auto_size?: boolean;
  quad?: boolean;
  smart_low_poly?: boolean;
  generate_parts?: boolean;
  prompt: string;
  negative_prompt?: string;
}
export interface SettingsModel3DImageToModel {
  task_type: 'image_to_model';
  model_version?: 'v3.1-20260211' | 'v3.0-20250812' | 'v2.5-20250123' | 'P1-20260311';
  texture?: boolean;
  pbr?: boolean;
  texture_quality?: 'standard' | 'detailed';
  geometry_quality?: 'standard' | 'detailed';
  face_limit?: number;
  auto_size?: boolean;
  quad?: boolean;
  smart_low_poly?: boolean;
  generate_parts?: boolean;
  orientation?: 'default' | 'align_image';
  texture_alignment?: 'original_image' | 'geometry';
  enable_image_autofix?: boolean;
  /**
   * @minItems 1
   * @maxItems 1
   */
  image_url: [string];
}
export interface SettingsModel3DMultiviewToModel {
  task_type: 'multiview_to_model';
  model_version?: 'v3.1-20260211' | 'v3.0-20250812' | 'v2.5-20250123' | 'P1-20260311';
  texture?: boolean;
  pbr?: boolean;
  texture_quality?: 'standard' | 'detailed';
  geometry_quality?: 'standard' | 'detailed';
  face_limit?: number;
  auto_size?: boolean;
  quad?: boolean;
  smart_low_poly?: boolean;
  generate_parts?: boolean;
  orientation?: 'default' | 'align_image';
  texture_alignment?: 'original_image' | 'geometry';
  enable_image_autofix?: boolean;
  /**
   * @minItems 1
   * @maxItems 1
   */
  front_url: [string];
  /**
   * @maxItems 1
   */
  left_url?: [] | [string];
  /**
   * @maxItems 1
   */
  back_url?: [] | [string];
  /**
   * @maxItems 1
   */
  right_url?: [] | [string];
}
export interface SettingsVideoFrames {
  mode: 'frames';
  model?: '3_0';
  quality?: '480p' | '720p' | '1080p';
  aspect_ratio?: '16:9' | '9:16' | '1:1' | '4:3' | '3:4';
  duration?:
    | '2s'
    | '3s'
    | '4s'
    | '5s'
    | '6s'
    | '7s'
    | '8s'
    | '9s'
    | '10s'
    | '11s'
    | '12s'
    | '13s'
    | '14s'
    | '15s'
    | '16s'
    | '17s'
    | '18s'
    | '19s'
    | '20s'
    | '21s'
    | '22s'
    | '23s'
    | '24s'
    | '25s'
    | '26s'
    | '27s'
    | '28s'
    | '29s'
    | '30s';
  prompt: string;
  /**
   * @minItems 1
   * @maxItems 2
   */
  image_urls: [string] | [string, string];
  /**
   * true only on older model versions, not on 3_0
   */
  multi_shots?: false;
  audio?: never;
}
export interface SettingsVideoReference {
  mode: 'reference';
  model?: '3_0';
  quality?: '480p' | '720p' | '1080p';
  aspect_ratio?: '16:9' | '9:16' | '1:1' | '4:3' | '3:4';
  duration?:
    | '2s'
    | '3s'
    | '4s'
    | '5s'
    | '6s'
    | '7s'
    | '8s'
    | '9s'
    | '10s'
    | '11s'
    | '12s'
    | '13s'
    | '14s'
    | '15s'
    | '16s'
    | '17s'
    | '18s'
    | '19s'
    | '20s'
    | '21s'
    | '22s'
    | '23s'
    | '24s'
    | '25s'
    | '26s'
    | '27s'
    | '28s'
    | '29s'
    | '30s';
  prompt: string;
  /**
   * @maxItems 5
   */
  ref_image_urls?:
    | []
    | [string]
    | [string, string]
    | [string, string, string]
    | [string, string, string, string]
    | [string, string, string, string, string];
  /**
   * @maxItems 5
   */
  ref_video_urls?:
    | []
    | [string]
    | [string, string]
    | [string, string, string]
    | [string, string, string, string]
    | [string, string, string, string, string];
  /**
   * @maxItems 1
   */
  first_frame_url?: [] | [string];
  /**
   * true only on older model versions, not on 3_0
   */
  multi_shots?: false;
}
export interface SettingsVideoOmni {
  mode: 'omni';
  model?: '3_0';
  quality?: '480p' | '720p' | '1080p';
  aspect_ratio?: '16:9' | '9:16' | '1:1' | '4:3' | '3:4';
  duration?:
    | '2s'
    | '3s'
    | '4s'
    | '5s'
    | '6s'
    | '7s'
    | '8s'
    | '9s'
    | '10s'
    | '11s'
    | '12s'
    | '13s'
    | '14s'
    | '15s'
    | '16s'
    | '17s'
    | '18s'
    | '19s'
    | '20s'
    | '21s'
    | '22s'
    | '23s'
    | '24s'
    | '25s'
    | '26s'
    | '27s'
    | '28s'
    | '29s'
    | '30s';
  prompt: string;
  /**
   * @maxItems 10
   */
  ref_image_urls?:
    | []
    | [string]
    | [string, string]
    | [string, string, string]
    | [string, string, string, string]
    | [string, string, string, string, string]
    | [string, string, string, string, string, string]
    | [string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string];
  /**
   * @maxItems 5
   */
  ref_video_urls?:
    | []
    | [string]
    | [string, string]
    | [string, string, string]
    | [string, string, string, string]
    | [string, string, string, string, string];
  /**
   * @maxItems 5
   */
  ref_audio_urls?:
    | []
    | [string]
    | [string, string]
    | [string, string, string]
    | [string, string, string, string]
    | [string, string, string, string, string];
}
export interface SettingsMusicSounds {
  mode: 'sounds';
  model?: 'V6' | 'V6_MINI' | 'V6_WILD';
  soundDescription: string;
  soundLoop?: boolean;
  soundTempo?: number;
  soundKey?:
    | ''
    | 'C'
    | 'Cm'
    | 'C#'
    | 'C#m'
    | 'D'
    | 'Dm'
    | 'D#'
    | 'D#m'
    | 'E'
    | 'Em'
    | 'F'
    | 'Fm'
    | 'F#'
    | 'F#m'
    | 'G'
    | 'Gm'
    | 'G#'
    | 'G#m'
    | 'A'
    | 'Am'
    | 'A#'
    | 'A#m'
    | 'B'
    | 'Bm';
}
export interface SettingsMusicAddVocals {
  mode: 'add_vocals';
  model?: 'V6' | 'V6_MINI' | 'V6_WILD';
  /**
   * @minItems 1
   * @maxItems 1
   */
  audio: [string];
  title: string;
  style: string;
  prompt: string;
  negativeTags: string;
  vocalGender?: '' | 'm' | 'f';
  styleWeight?: number;
  weirdnessConstraint?: number;
  audioWeight?: number;
}
export interface SettingsMusicAddInstrumental {
  mode: 'add_instrumental';
  model?: 'V6' | 'V6_MINI' | 'V6_WILD';
  /**
   * @minItems 1
   * @maxItems 1
   */
  audio: [string];
  title: string;
  tags: string;
  negativeTags: string;
  vocalGender?: '' | 'm' | 'f';
  styleWeight?: number;
  weirdnessConstraint?: number;
  audioWeight?: number;
}
export interface SettingsMusicExtend {
  mode: 'extend';
  model?: 'V6' | 'V6_MINI' | 'V6_WILD';
  /**
   * @minItems 1
   * @maxItems 1
   */
  audio: [string];
  continueAt: number;
  title?: string;
  style?: string;
  prompt?: string;
  instrumental?: boolean;
  negativeTags?: string;
  vocalGender?: '' | 'm' | 'f';
  styleWeight?: number;
  weirdnessConstraint?: number;
  audioWeight?: number;
  persona?: string;
  voice?: string;
  defaultParamFlag?: never;
}
export interface SettingsMusicReplaceUpload {
  mode: 'replace_upload';
  model?: 'V6' | 'V6_MINI' | 'V6_WILD';
  /**
   * @minItems 1
   * @maxItems 1
   */
  audio: [string];
  infillStartS: number;
  infillEndS: number;
  prompt: string;
  fullLyrics: string;
  tags: string;
  title: string;
  negativeTags?: string;
}
export interface SettingsVideoElementsDefault {
  model_version?: 'v3.0' | 'v4.0' | 'v4.0-omni';
  prompt?: string;
  length?: number;
  multi_shot?: boolean;
  /**
   * @minItems 2
   * @maxItems 6
   */
  shots?:
    | [
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
      ]
    | [
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
      ]
    | [
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
      ]
    | [
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
      ]
    | [
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
        {
          prompt: string;
          duration: number;
        },
      ];
}
export interface SettingsVoiceTextToDialogue {
  mode: 'text_to_dialogue';
  text: string;
  voice: string;
  voice_2?: string;
  voice_3?: string;
  voice_4?: string;
  voice_5?: string;
  voice_6?: string;
  voice_7?: string;
  voice_8?: string;
  voice_9?: string;
  voice_10?: string;
  voice_11?: string;
  voice_12?: string;
  voice_13?: string;
  voice_14?: string;
  voice_15?: string;
  voice_16?: string;
  voice_17?: string;
  voice_18?: string;
  voice_19?: string;
  voice_20?: string;
}
export interface SettingsVoiceVoiceChange {
  mode: 'voice_change';
  /**
   * @minItems 1
   * @maxItems 1
   */
  audio: [string];
  voice: string;
}
export interface SettingsImageDefault {
  prompt: string;
  style_id?: string;
  size?: '1024x1024' | '1365x1024' | '1024x1365' | '1536x1024' | '1024x1536';
  n?: number;
}
export interface SettingsMusicStylesDefault {
  prompt: string;
  style?: string;
  instrumental?: boolean;
  duration?: number;
}
export interface SettingsVideoOmniDefault {
  prompt: string;
  /**
   * ids of own characters (/v1/models/video-omni/characters), up to 3
   *
   * @maxItems 3
   */
  character_ids?: [] | [string] | [string, string] | [string, string, string];
  /**
   * ids of own or ready voices (/v1/models/video-omni/voices), up to 3
   *
   * @maxItems 3
   */
  audio_ids?: [] | [string] | [string, string] | [string, string, string];
  duration?: number;
  aspect_ratio?: '16:9' | '9:16' | '1:1';
}
export interface ErrorInput {
  error: {
    /**
     * stable code for programs
     */
    code: string;
    /**
     * in the language asked for (?lang= or Accept-Language)
     */
    message: string;
  };
  [k: string]: unknown | undefined;
}
export interface ModelInput {
  key: string;
  kind: '3d' | 'video' | 'audio' | 'speech' | 'image';
  name: string;
  available: boolean;
  mode_field: string | null;
  max_active: number;
  modes: {
    name: string;
    settings_schema: {
      [k: string]: unknown | undefined;
    };
  }[];
}
export interface ArtifactInput {
  index: number;
  kind: 'image' | 'document' | 'video' | 'audio';
  filename: string;
  content_type: string;
  /**
   * bytes
   */
  size: number;
  caption: string;
  /**
   * /v1/tasks/<task_id>/artifacts/<index>
   */
  download_path: string;
}
export interface TaskInput {
  /**
   * UUID
   */
  id: string;
  model: string;
  mode: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';
  /**
   * settings as accepted, defaults filled in
   */
  settings: {
    [k: string]: unknown | undefined;
  };
  price: {
    amount_minor: number;
    currency: string;
  };
  progress: number;
  created_at: string;
  started_at: string | null;
  /**
   * present when the task is final
   */
  finished_at?: string;
  /**
   * present when status is succeeded
   */
  result?: {
    caption: string;
    texts: string[];
    files_expire_at: string;
    files_expired: boolean;
    artifacts: ArtifactInput[];
  };
  /**
   * present when status is failed
   */
  error?: {
    code: string;
    message: string;
  };
}
export interface UploadInput {
  id: string;
  /**
   * absolute direct link, works without an API key until expires_at
   */
  url: string;
  filename: string;
  content_type: string;
  kind: 'image' | 'video' | 'audio' | 'document';
  size: number;
  /**
   * audio and video
   */
  duration_seconds: number | null;
  width: number | null;
  height: number | null;
  created_at: string;
  expires_at: string;
}
export interface ElementInput {
  id: string;
  /**
   * Element_<id>, written in prompts
   */
  label: string;
  name: string;
  description: string;
  tag: string;
  type: 'image' | 'video';
  cover_url: string | null;
  created_at: string;
}
export interface SingingPersonaInput {
  id: string;
  name: string;
  description: string;
  style: string | null;
  /**
   * title of the song it was saved from
   */
  song_title: string;
  created_at: string;
}
export interface SingingVoiceInput {
  id: string;
  /**
   * null until the voice is verified
   */
  name: string | null;
  status: 'processing' | 'pending_recording' | 'verifying' | 'ready' | 'failed';
  language: string;
  /**
   * present when status is pending_recording
   */
  phrase?: string;
  /**
   * present when status is failed
   */
  error?: string;
  created_at: string;
}
export interface ClonedVoiceInput {
  id: string;
  name: string;
  status: 'ready';
  remove_background_noise: boolean;
  sample_count: number;
  created_at: string;
}
export interface ImageStyleInput {
  id: string;
  name: string;
  status: 'ready';
  type: 'raster' | 'vector';
  created_at: string;
}
export interface MusicStyleInput {
  id: string;
  name: string;
  status: 'training' | 'ready' | 'failed';
  description: string | null;
  /**
   * present when status is failed
   */
  error?: string;
  created_at: string;
}
export interface CharacterInput {
  id: string;
  name: string;
  status: 'ready';
  description: string | null;
  created_at: string;
}
export interface OmniVoiceInput {
  id: string;
  name: string;
  status: 'ready';
  base_voice_id: string;
  created_at: string;
}
export interface TopupInput {
  /**
   * tp_…
   */
  id: string;
  status: 'pending' | 'succeeded' | 'canceled';
  /**
   * kopecks
   */
  amount_minor: number;
  currency: 'RUB';
  /**
   * where the payer confirms the payment; null once the top-up is final
   */
  confirmation_url: string | null;
  /**
   * where the payer comes back after paying
   */
  return_url: string;
  cancellation_reason: string | null;
  created_at: string;
  updated_at: string;
}
export interface ErrorBody {
  error: {
    /**
     * stable code for programs
     */
    code: string;
    /**
     * in the language asked for (?lang= or Accept-Language)
     */
    message: string;
  };
  [k: string]: unknown | undefined;
}
export interface Model {
  key: string;
  kind: '3d' | 'video' | 'audio' | 'speech' | 'image';
  name: string;
  available: boolean;
  mode_field: string | null;
  max_active: number;
  modes: {
    name: string;
    settings_schema: {
      [k: string]: unknown | undefined;
    };
  }[];
}
export interface Artifact {
  index: number;
  kind: 'image' | 'document' | 'video' | 'audio';
  filename: string;
  content_type: string;
  /**
   * bytes
   */
  size: number;
  caption: string;
  /**
   * /v1/tasks/<task_id>/artifacts/<index>
   */
  download_path: string;
}
export interface Task {
  /**
   * UUID
   */
  id: string;
  model: string;
  mode: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';
  /**
   * settings as accepted, defaults filled in
   */
  settings: {
    [k: string]: unknown | undefined;
  };
  price: {
    amount_minor: number;
    currency: string;
  };
  progress: number;
  created_at: string;
  started_at: string | null;
  /**
   * present when the task is final
   */
  finished_at?: string;
  /**
   * present when status is succeeded
   */
  result?: {
    caption: string;
    texts: string[];
    files_expire_at: string;
    files_expired: boolean;
    artifacts: Artifact[];
  };
  /**
   * present when status is failed
   */
  error?: {
    code: string;
    message: string;
  };
}
export interface Upload {
  id: string;
  /**
   * absolute direct link, works without an API key until expires_at
   */
  url: string;
  filename: string;
  content_type: string;
  kind: 'image' | 'video' | 'audio' | 'document';
  size: number;
  /**
   * audio and video
   */
  duration_seconds: number | null;
  width: number | null;
  height: number | null;
  created_at: string;
  expires_at: string;
}
export interface Element {
  id: string;
  /**
   * Element_<id>, written in prompts
   */
  label: string;
  name: string;
  description: string;
  tag: string;
  type: 'image' | 'video';
  cover_url: string | null;
  created_at: string;
}
export interface SingingPersona {
  id: string;
  name: string;
  description: string;
  style: string | null;
  /**
   * title of the song it was saved from
   */
  song_title: string;
  created_at: string;
}
export interface SingingVoice {
  id: string;
  /**
   * null until the voice is verified
   */
  name: string | null;
  status: 'processing' | 'pending_recording' | 'verifying' | 'ready' | 'failed';
  language: string;
  /**
   * present when status is pending_recording
   */
  phrase?: string;
  /**
   * present when status is failed
   */
  error?: string;
  created_at: string;
}
export interface ClonedVoice {
  id: string;
  name: string;
  status: 'ready';
  remove_background_noise: boolean;
  sample_count: number;
  created_at: string;
}
export interface ImageStyle {
  id: string;
  name: string;
  status: 'ready';
  type: 'raster' | 'vector';
  created_at: string;
}
export interface MusicStyle {
  id: string;
  name: string;
  status: 'training' | 'ready' | 'failed';
  description: string | null;
  /**
   * present when status is failed
   */
  error?: string;
  created_at: string;
}
export interface Character {
  id: string;
  name: string;
  status: 'ready';
  description: string | null;
  created_at: string;
}
export interface OmniVoice {
  id: string;
  name: string;
  status: 'ready';
  base_voice_id: string;
  created_at: string;
}
export interface Topup {
  /**
   * tp_…
   */
  id: string;
  status: 'pending' | 'succeeded' | 'canceled';
  /**
   * kopecks
   */
  amount_minor: number;
  currency: 'RUB';
  /**
   * where the payer confirms the payment; null once the top-up is final
   */
  confirmation_url: string | null;
  /**
   * where the payer comes back after paying
   */
  return_url: string;
  cancellation_reason: string | null;
  created_at: string;
  updated_at: string;
}
export interface TaskRequestModel3D {
  model: 'model-3d';
  settings: TaskSettingsModel3D;
  /**
   * called with signed events of this task (Standard Webhooks); public http(s) addresses only
   */
  webhook_url?: string;
  /**
   * event types sent to webhook_url (default: task.succeeded, task.failed, task.canceled); repeats count once
   *
   * @minItems 1
   * @maxItems 50
   */
  webhook_events?: [
    'task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled',
    ...('task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled')[],
  ];
}
export interface TaskRequestVideo {
  model: 'video';
  settings: TaskSettingsVideo;
  /**
   * called with signed events of this task (Standard Webhooks); public http(s) addresses only
   */
  webhook_url?: string;
  /**
   * event types sent to webhook_url (default: task.succeeded, task.failed, task.canceled); repeats count once
   *
   * @minItems 1
   * @maxItems 50
   */
  webhook_events?: [
    'task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled',
    ...('task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled')[],
  ];
}
export interface TaskRequestMusic {
  model: 'music';
  settings: TaskSettingsMusic;
  /**
   * called with signed events of this task (Standard Webhooks); public http(s) addresses only
   */
  webhook_url?: string;
  /**
   * event types sent to webhook_url (default: task.succeeded, task.failed, task.canceled); repeats count once
   *
   * @minItems 1
   * @maxItems 50
   */
  webhook_events?: [
    'task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled',
    ...('task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled')[],
  ];
}
export interface TaskRequestVideoElements {
  model: 'video-elements';
  settings: TaskSettingsVideoElements;
  /**
   * called with signed events of this task (Standard Webhooks); public http(s) addresses only
   */
  webhook_url?: string;
  /**
   * event types sent to webhook_url (default: task.succeeded, task.failed, task.canceled); repeats count once
   *
   * @minItems 1
   * @maxItems 50
   */
  webhook_events?: [
    'task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled',
    ...('task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled')[],
  ];
}
export interface TaskRequestVoice {
  model: 'voice';
  settings: TaskSettingsVoice;
  /**
   * called with signed events of this task (Standard Webhooks); public http(s) addresses only
   */
  webhook_url?: string;
  /**
   * event types sent to webhook_url (default: task.succeeded, task.failed, task.canceled); repeats count once
   *
   * @minItems 1
   * @maxItems 50
   */
  webhook_events?: [
    'task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled',
    ...('task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled')[],
  ];
}
export interface TaskRequestImage {
  model: 'image';
  settings: TaskSettingsImage;
  /**
   * called with signed events of this task (Standard Webhooks); public http(s) addresses only
   */
  webhook_url?: string;
  /**
   * event types sent to webhook_url (default: task.succeeded, task.failed, task.canceled); repeats count once
   *
   * @minItems 1
   * @maxItems 50
   */
  webhook_events?: [
    'task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled',
    ...('task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled')[],
  ];
}
export interface TaskRequestMusicStyles {
  model: 'music-styles';
  settings: TaskSettingsMusicStyles;
  /**
   * called with signed events of this task (Standard Webhooks); public http(s) addresses only
   */
  webhook_url?: string;
  /**
   * event types sent to webhook_url (default: task.succeeded, task.failed, task.canceled); repeats count once
   *
   * @minItems 1
   * @maxItems 50
   */
  webhook_events?: [
    'task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled',
    ...('task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled')[],
  ];
}
export interface TaskRequestVideoOmni {
  model: 'video-omni';
  settings: TaskSettingsVideoOmni;
  /**
   * called with signed events of this task (Standard Webhooks); public http(s) addresses only
   */
  webhook_url?: string;
  /**
   * event types sent to webhook_url (default: task.succeeded, task.failed, task.canceled); repeats count once
   *
   * @minItems 1
   * @maxItems 50
   */
  webhook_events?: [
    'task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled',
    ...('task.started' | 'task.progress' | 'task.succeeded' | 'task.failed' | 'task.canceled')[],
  ];
}
export interface TaskList {
  tasks: Task[];
  next_cursor: string | null;
}
export interface Price {
  amount_minor: number;
  currency: string;
  available_minor: number;
}
export interface ModelList {
  models: Model[];
}
export interface Me {
  account_id: string;
  /**
   * the key of the request; null when the dashboard session cookie authenticated it
   */
  key: {
    id: string;
    prefix: string;
  } | null;
  /**
   * the account's e-mail, for accounts of people (CONTRACT §13)
   */
  email?: string;
  /**
   * whether that e-mail is confirmed
   */
  email_confirmed?: boolean;
  /**
   * true when the key may use only the models listed in models
   */
  restricted: boolean;
  /**
   * model keys this key may use
   */
  models: string[];
  /**
   * daily spending limit (kopecks), null = no limit
   */
  daily_limit_minor: number | null;
  /**
   * captured and held amounts of tasks created with this key today
   */
  spent_today_minor: number;
  remaining_today_minor: number | null;
  /**
   * end of the current Moscow day (ISO 8601)
   */
  day_resets_at: string;
  currency: string;
  /**
   * account balance available for new tasks now
   */
  available_minor: number;
}
export interface VideoElementsElementsList {
  elements: Element[];
  tags: {
    key: string;
    name: string;
    views: string[];
  }[];
  /**
   * bounds of the creation fields
   */
  limits: {
    [k: string]: unknown | undefined;
  };
}
export interface VideoElementsElementsCreate {
  name: string;
  description?: string;
  /**
   * kind of element; GET lists the tags
   */
  tag: 'character' | 'object' | 'animal' | 'vehicle' | 'scene';
  /**
   * up to 4 pictures; the first is the cover, others show the element from other sides
   *
   * @minItems 1
   * @maxItems 4
   */
  image_urls?: [string] | [string, string] | [string, string, string] | [string, string, string, string];
  /**
   * one short video; only with tag character
   */
  video_url?: string | [string];
}
export interface MusicPersonasList {
  personas: SingingPersona[];
  /**
   * bounds of the creation fields
   */
  limits: {
    [k: string]: unknown | undefined;
  };
}
export interface MusicPersonasCreate {
  /**
   * id of a succeeded song task of model music
   */
  source_task_id: string;
  /**
   * index of the song version in result.artifacts
   */
  index: number;
  name: string;
  description: string;
  style?: string;
}
export interface MusicVoicesList {
  voices: SingingVoice[];
  /**
   * bounds of the creation fields
   */
  limits: {
    [k: string]: unknown | undefined;
  };
}
export interface MusicVoicesCreate {
  /**
   * direct link to a recording of the caller singing
   */
  source_url: string | [string];
  start_seconds: number;
  end_seconds: number;
  language?: string;
}
export interface VoiceVoicesList {
  voices: ClonedVoice[];
  /**
   * bounds of the creation fields
   */
  limits: {
    [k: string]: unknown | undefined;
  };
}
export interface VoiceVoicesCreate {
  name: string;
  /**
   * 1 to 10 recordings of the voice
   *
   * @minItems 1
   * @maxItems 10
   */
  sample_urls:
    | [string]
    | [string, string]
    | [string, string, string]
    | [string, string, string, string]
    | [string, string, string, string, string]
    | [string, string, string, string, string, string]
    | [string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string];
  remove_background_noise?: boolean;
}
export interface ImageStylesList {
  styles: ImageStyle[];
  /**
   * bounds of the creation fields
   */
  limits: {
    [k: string]: unknown | undefined;
  };
}
export interface ImageStylesCreate {
  name: string;
  /**
   * 1 to 10 pictures in the style
   *
   * @minItems 1
   * @maxItems 10
   */
  image_urls:
    | [string]
    | [string, string]
    | [string, string, string]
    | [string, string, string, string]
    | [string, string, string, string, string]
    | [string, string, string, string, string, string]
    | [string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string];
  /**
   * vector styles give SVG pictures
   */
  type?: 'raster' | 'vector';
}
export interface MusicStylesStylesList {
  styles: MusicStyle[];
  /**
   * bounds of the creation fields
   */
  limits: {
    [k: string]: unknown | undefined;
  };
}
export interface MusicStylesStylesCreate {
  name: string;
  /**
   * 1 to 10 of the caller's own tracks
   *
   * @minItems 1
   * @maxItems 10
   */
  track_urls:
    | [string]
    | [string, string]
    | [string, string, string]
    | [string, string, string, string]
    | [string, string, string, string, string]
    | [string, string, string, string, string, string]
    | [string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string];
  description?: string;
}
export interface VideoOmniCharactersList {
  characters: Character[];
  /**
   * bounds of the creation fields
   */
  limits: {
    [k: string]: unknown | undefined;
  };
}
export interface VideoOmniCharactersCreate {
  name: string;
  /**
   * a portrait of the character
   */
  portrait_url: string | [string];
  /**
   * a full-length shot of the character
   */
  full_body_url: string | [string];
  description?: string;
}
export interface VideoOmniVoicesList {
  voices: OmniVoice[];
  presets: {
    id: string;
    name: string;
    status: string;
    language: string;
  }[];
  /**
   * bounds of the creation fields
   */
  limits: {
    [k: string]: unknown | undefined;
  };
}
export interface VideoOmniVoicesCreate {
  name: string;
  /**
   * id of a ready voice from the list response presets
   */
  base_voice_id: 'preset-warm-narrator' | 'preset-bright-host' | 'preset-deep-baritone' | 'preset-soft-alto';
  /**
   * 1 to 3 recordings of the voice
   *
   * @minItems 1
   * @maxItems 3
   */
  sample_urls: [string] | [string, string] | [string, string, string];
}
export interface MusicLyricsRequest {
  /**
   * the song idea
   */
  prompt: string;
}
export interface MusicLyricsResponse {
  variants: {
    title: string;
    /**
     * verses and chorus
     */
    text: string;
  }[];
}
export interface MusicStyleBoostRequest {
  /**
   * short style, e.g. "sad jazz"
   */
  style: string;
}
export interface MusicStyleBoostResponse {
  /**
   * genre, tempo, key, instruments, vocals, production
   */
  style: string;
}
export interface ImageEnhanceRequest {
  prompt: string;
}
export interface ImageEnhanceResponse {
  /**
   * the richer description
   */
  prompt: string;
}

export type VideoElementsElementsRecord = Element;
export type MusicPersonasRecord = SingingPersona;
export type MusicVoicesRecord = SingingVoice;
export type VoiceVoicesRecord = ClonedVoice;
export type ImageStylesRecord = ImageStyle;
export type MusicStylesStylesRecord = MusicStyle;
export type VideoOmniCharactersRecord = Character;
export type VideoOmniVoicesRecord = OmniVoice;

/** Settings of each model: a union of its modes' settings. */
export interface SettingsByModel {
  'model-3d': SettingsModel3DTextToModel | SettingsModel3DImageToModel | SettingsModel3DMultiviewToModel;
  video: SettingsVideoFrames | SettingsVideoReference | SettingsVideoOmni;
  music:
    | SettingsMusicGenerate
    | SettingsMusicSounds
    | SettingsMusicAddVocals
    | SettingsMusicAddInstrumental
    | SettingsMusicCoverUpload
    | SettingsMusicExtend
    | SettingsMusicReplaceUpload
    | SettingsMusicMashup;
  'video-elements': SettingsVideoElementsDefault;
  voice: SettingsVoiceTextToDialogue | SettingsVoiceVoiceChange;
  image: SettingsImageDefault;
  'music-styles': SettingsMusicStylesDefault;
  'video-omni': SettingsVideoOmniDefault;
}

/** Each library, by `model/segment`: its list answer, record and creation body. */
export interface LibraryTypes {
  'video-elements/elements': {
    list: VideoElementsElementsList;
    record: VideoElementsElementsRecord;
    create: VideoElementsElementsCreate;
  };
  'music/personas': { list: MusicPersonasList; record: MusicPersonasRecord; create: MusicPersonasCreate };
  'music/voices': { list: MusicVoicesList; record: MusicVoicesRecord; create: MusicVoicesCreate };
  'voice/voices': { list: VoiceVoicesList; record: VoiceVoicesRecord; create: VoiceVoicesCreate };
  'image/styles': { list: ImageStylesList; record: ImageStylesRecord; create: ImageStylesCreate };
  'music-styles/styles': {
    list: MusicStylesStylesList;
    record: MusicStylesStylesRecord;
    create: MusicStylesStylesCreate;
  };
  'video-omni/characters': {
    list: VideoOmniCharactersList;
    record: VideoOmniCharactersRecord;
    create: VideoOmniCharactersCreate;
  };
  'video-omni/voices': {
    list: VideoOmniVoicesList;
    record: VideoOmniVoicesRecord;
    create: VideoOmniVoicesCreate;
  };
}

/** Each free helper, by `model/helper`: its request and answer. */
export interface HelperTypes {
  'music/lyrics': { request: MusicLyricsRequest; response: MusicLyricsResponse };
  'music/style-boost': { request: MusicStyleBoostRequest; response: MusicStyleBoostResponse };
  'image/enhance': { request: ImageEnhanceRequest; response: ImageEnhanceResponse };
}
