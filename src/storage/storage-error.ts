/** A failed call to the object store; `cause` holds the SDK's error, the message only its code. */
export class StorageError extends Error {
  override name = 'StorageError';
}
