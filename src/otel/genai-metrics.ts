import type { Attributes, Meter } from '@opentelemetry/api';
import type { ModelCallEndInfo } from '../telemetry/agent-telemetry.js';
import { ATTR } from './genai-attributes.js';

/** The bucket boundaries the conventions advise for `gen_ai.client.operation.duration` (seconds). */
const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
/** ... and for `gen_ai.client.token.usage` (tokens). */
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];

/**
 * The GenAI client metrics: `gen_ai.client.operation.duration` per HTTP attempt (with `error.type` on
 * a failed one) and `gen_ai.client.token.usage` per answered attempt, input and output apart.
 */
export function genAiMetrics(meter: Meter) {
  const duration = meter.createHistogram('gen_ai.client.operation.duration', {
    description: 'GenAI operation duration',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  const tokens = meter.createHistogram('gen_ai.client.token.usage', {
    description: 'Number of input and output tokens used',
    unit: '{token}',
    advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
  });
  return {
    record(call: { startedAt: number; metricAttributes: Attributes }, info: ModelCallEndInfo): void {
      const attributes: Attributes = { ...call.metricAttributes };
      if (info.responseModel !== undefined) attributes[ATTR.responseModel] = info.responseModel;
      if (info.errorType !== undefined) attributes[ATTR.errorType] = info.errorType;
      duration.record((performance.now() - call.startedAt) / 1000, attributes);
      if (!info.usage) return;
      tokens.record(info.usage.inputTokens, { ...attributes, [ATTR.tokenType]: 'input' });
      tokens.record(info.usage.outputTokens, { ...attributes, [ATTR.tokenType]: 'output' });
    },
  };
}
