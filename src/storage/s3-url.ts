/** Static credentials given in STORAGE_URL; when absent the AWS SDK's default chain is used. */
export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Where S3 objects live: parsed from `s3://bucket[/prefix]?endpoint=…&region=…` (CONTRACT §1). */
export interface S3Location {
  bucket: string;
  /** Key prefix without leading or trailing slashes; `''` for none. */
  prefix: string;
  /** S3-compatible endpoint (`http://127.0.0.1:4569`); undefined for AWS itself. */
  endpoint?: string;
  /** undefined leaves it to the SDK (AWS_REGION, config files); `us-east-1` when an endpoint is given. */
  region?: string;
  /** Path-style addressing (`endpoint/bucket/key`); defaults to true when an endpoint is given. */
  forcePathStyle: boolean;
  credentials?: S3Credentials;
  /** `connectTimeout`: milliseconds to wait for a TCP connection; undefined keeps the store's default. */
  connectTimeoutMs?: number;
  /** `requestTimeout`: milliseconds from sending a request to its answer; undefined keeps the default. */
  requestTimeoutMs?: number;
  /** `idleTimeout`: milliseconds a connection may carry no bytes mid-call; undefined keeps the default. */
  idleTimeoutMs?: number;
}

const KNOWN_PARAMS = new Set([
  'endpoint',
  'region',
  'forcePathStyle',
  'accessKeyId',
  'secretAccessKey',
  'sessionToken',
  'connectTimeout',
  'requestTimeout',
  'idleTimeout',
]);

/** The timeout parameters and the S3Location fields they fill. */
const TIMEOUT_PARAMS = {
  connectTimeout: 'connectTimeoutMs',
  requestTimeout: 'requestTimeoutMs',
  idleTimeout: 'idleTimeoutMs',
} as const;

/** S3 bucket naming rules (the lowercase, DNS-compatible form every S3-compatible server accepts). */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION = /^[a-z0-9-]{1,64}$/;

function invalid(reason: string): Error {
  return new Error(`STORAGE_URL is not a valid s3:// URL: ${reason}`);
}

function parseBoolean(name: string, value: string): boolean {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw invalid(`${name} must be true or false`);
}

function parseMilliseconds(name: string, value: string): number {
  if (!/^\d{1,9}$/.test(value) || Number(value) === 0) {
    throw invalid(`${name} must be a positive whole number of milliseconds`);
  }
  return Number(value);
}

function parseEndpoint(value: string): string {
  let endpoint: URL;
  try {
    endpoint = new URL(value);
  } catch {
    throw invalid('endpoint is not a URL');
  }
  if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') {
    throw invalid('endpoint must be an http:// or https:// URL');
  }
  if (endpoint.username || endpoint.password) throw invalid('endpoint must not carry credentials');
  if (endpoint.search || endpoint.hash) throw invalid('endpoint must not have a query or fragment');
  return endpoint.href.replace(/\/+$/, '');
}

function parsePrefix(pathname: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    throw invalid('the key prefix is not valid percent-encoding');
  }
  // The URL parser has already resolved `.` and `..` segments (also percent-encoded ones).
  return decoded
    .split('/')
    .filter((segment) => segment !== '')
    .join('/');
}

function parseCredentials(params: URLSearchParams): S3Credentials | undefined {
  const accessKeyId = params.get('accessKeyId');
  const secretAccessKey = params.get('secretAccessKey');
  const sessionToken = params.get('sessionToken');
  if (accessKeyId === null && secretAccessKey === null) {
    if (sessionToken !== null) throw invalid('sessionToken needs accessKeyId and secretAccessKey');
    return undefined;
  }
  if (!accessKeyId || !secretAccessKey) {
    throw invalid('accessKeyId and secretAccessKey must be given together');
  }
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

/**
 * Parses STORAGE_URL for S3-compatible storage:
 * `s3://bucket[/prefix]?endpoint=http://127.0.0.1:4569&region=us-east-1&forcePathStyle=true&accessKeyId=…&secretAccessKey=…`,
 * optionally with `connectTimeout`, `requestTimeout` and `idleTimeout` in milliseconds.
 * Every query parameter is optional; unknown ones are refused so that typos do not pass silently.
 * Error messages name STORAGE_URL and never repeat the URL (it may hold a secret key).
 *
 * @throws Error when the URL is not a usable s3:// URL.
 */
export function parseS3Url(url: string): S3Location {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid('not a URL');
  }
  if (parsed.protocol !== 's3:') throw invalid('the scheme must be s3://');
  if (parsed.username || parsed.password) {
    throw invalid('put credentials in accessKeyId/secretAccessKey query parameters, not before the bucket');
  }
  if (parsed.port) throw invalid('a port belongs in the endpoint parameter, not after the bucket');
  if (parsed.hash) throw invalid('a fragment is not allowed');
  const bucket = parsed.hostname;
  if (!bucket) throw invalid('the bucket name is missing (s3://bucket)');
  if (!BUCKET_NAME.test(bucket) || bucket.includes('..')) {
    throw invalid('the bucket name must be 3–63 characters of a-z, 0-9, dots and hyphens');
  }

  const params = parsed.searchParams;
  for (const name of new Set(params.keys())) {
    if (!KNOWN_PARAMS.has(name)) throw invalid(`unknown parameter "${name}"`);
    if (params.getAll(name).length > 1) throw invalid(`parameter "${name}" is given more than once`);
  }

  const endpointParam = params.get('endpoint');
  const endpoint = endpointParam === null ? undefined : parseEndpoint(endpointParam);
  const regionParam = params.get('region');
  if (regionParam !== null && !REGION.test(regionParam)) throw invalid('region is not a region name');
  const region = regionParam ?? (endpoint ? 'us-east-1' : undefined);
  const pathStyleParam = params.get('forcePathStyle');
  const forcePathStyle =
    pathStyleParam === null ? endpoint !== undefined : parseBoolean('forcePathStyle', pathStyleParam);

  const location: S3Location = { bucket, prefix: parsePrefix(parsed.pathname), forcePathStyle };
  if (endpoint !== undefined) location.endpoint = endpoint;
  if (region !== undefined) location.region = region;
  const credentials = parseCredentials(params);
  if (credentials) location.credentials = credentials;
  for (const [param, field] of Object.entries(TIMEOUT_PARAMS)) {
    const value = params.get(param);
    if (value !== null) location[field] = parseMilliseconds(param, value);
  }
  return location;
}
