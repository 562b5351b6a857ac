// The custom search attributes the operator keeps current on its workflows (registered on the
// Temporal server as Keyword; the local control plane registers them at start).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const WekaNode = defineSearchAttributeKey('WekaNode', SearchAttributeType.KEYWORD);
export const WekaCluster = defineSearchAttributeKey('WekaCluster', SearchAttributeType.KEYWORD);
export const WekaContainer = defineSearchAttributeKey('WekaContainer', SearchAttributeType.KEYWORD);
export const WekaPhase = defineSearchAttributeKey('WekaPhase', SearchAttributeType.KEYWORD);
