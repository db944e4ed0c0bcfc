/**
 * service-analytics, browser client. `createAnalytics(config)` returns a client whose queue,
 * batching, retry and uploads run in a Web Worker; the main thread keeps a thin facade.
 */
export { createAnalytics } from './create-analytics.js';
export { SessionRecorder } from './recorder/session-recorder.js';
export { AnalyticsError, isAnalyticsError } from './errors.js';
export { DEFAULTS, resolveConfig } from './config.js';
export { calculateBounceLikelihood, calculateEngagementScore } from './session/engagement.js';

export type { Analytics } from './analytics.js';
export type { AnalyticsConfig, DiscardInfo, ResolvedConfig } from './config.js';
export type { AnalyticsErrorCode, AnalyticsErrorOptions } from './errors.js';
export type { EngagementInput } from './session/engagement.js';
export type { SessionStore } from './session/session-state.js';
export type { ExperimentOperations } from './experiments/experiments.js';
export type { FunnelOperations } from './business/funnels.js';
export type { RecorderOperations } from './recorder/facade-recorder.js';
export type { RecorderState } from './recorder/session-recorder.js';
export type { ConsoleCaptureOptions, NetworkCaptureOptions, RecordingConfig, RecordingSampling, RecordingStartOptions } from './recorder/recording-config.js';
export type { ConsoleEntry, ConsoleLevel, NetworkEntry, NetworkInitiator, CapturedHeaders } from '../protocol/replay-entries.js';
export type { SubscriptionOperations } from './business/subscriptions.js';
export type { DeliveryStats } from './delivery/delivery-client.js';
export type { DeliveryMode } from './delivery/core-connection.js';
export type { BeforeSend, OutgoingEvent } from './privacy/before-send.js';
export type { ConsentState } from './privacy/consent.js';
export type {
  AnalyticsEvent,
  AnalyticsEventType,
  DiscardReason,
  ErrorData,
  ErrorType,
  EventContext,
  EventProperties,
  EventPropertyValue,
  FunnelState,
  FunnelStatus,
  FunnelStep,
  HeatmapData,
  PageProperties,
  PerformanceData,
  QueueStats,
  ScrollDepthData,
  SessionData,
  TrafficChannel,
  UserProperties,
  UserPropertyValue,
} from './types.js';
export type {
  BillingInterval,
  ChurnRiskCategory,
  ChurnRiskMetrics,
  PaymentEventProperties,
  PaymentStatus,
  SubscriptionProperties,
  SubscriptionStatus,
} from './business/subscription-types.js';
export type { ABTestConfig, Experiment, ExperimentAssignment, ExperimentStatus, Variant } from './experiments/experiment-types.js';
