export {
  BackendEventLean,
  BackendEventStruct,
  FORBIDDEN_PROPERTY_KEYS,
  explainInvalidEvent,
  isBackendEvent,
} from './backend-event.js';
export { isIsoTimestamp, parseIsoTimestamp } from './iso-timestamp.js';
export type { BackendEvent, PropertyValue } from './backend-event.js';
export { checkBatch } from './batch.js';
export type { BatchCheck } from './batch.js';
export { ERROR_STATUS, isRetryableStatus } from './error-codes.js';
export type { BatchResponse, ErrorBody, ErrorCode, RecordingResponse, RejectedEvent } from './error-codes.js';
export { LIMITS, SESSION_ID_PATTERN } from './limits.js';
export {
  RECORDING_LIMITS,
  RecordedEventStruct,
  RecordingUploadLean,
  RecordingUploadStruct,
  explainInvalidRecording,
  isRecordingUpload,
  recordedDataProblem,
  recordingUploadProblem,
} from './recording.js';
export type { RecordedEvent, RecordingLimits, RecordingUpload } from './recording.js';
