import type { Index } from '@pinecone-database/pinecone';
import { BackendError, type DistanceMetric } from '@zerda/core';
import { readEnv } from '@zerda/core/backend';
import type { PineconeRequests } from './pinecone-requests.js';
import {
  type PineconeStoreSettings,
  type ResolvedSettings,
  refuse,
  toZerdaMetric,
} from './pinecone-settings.js';

/** The index a store works on, with its metric and dimension where they had to be asked for. */
export interface FoundIndex {
  index: Index;
  metric?: DistanceMetric | undefined;
  dimension?: number | undefined;
}

/**
 * Finds the index the settings name, describing it where they leave its host or metric open (a
 * handle or a host with a metric need no control-plane call), and checks it against the settings:
 * a sparse index, another metric, another dimension, or sparse vectors on an index that is not
 * dotproduct are refused with what to do. `dimension` is the store's, if known.
 */
export async function findIndex(
  settings: PineconeStoreSettings,
  { indexName: name, metric: metricSetting, apiKey }: ResolvedSettings,
  requests: PineconeRequests,
  dimension: number | undefined,
): Promise<FoundIndex> {
  const { client: given, host: hostSetting, sparse } = settings;
  let index = settings.index;
  let metric: DistanceMetric | undefined;
  let described: number | undefined;
  if (index === undefined) {
    const controllerHostUrl = settings.controllerHostUrl ?? readEnv('PINECONE_CONTROLLER_HOST');
    const client = given ?? requests.createClient(apiKey() as string, controllerHostUrl);
    if (given) requests.addSecret(() => given.getConfig().apiKey);
    let host = hostSetting;
    if (name !== undefined && (host === undefined || metricSetting === undefined)) {
      const description = await requests.run('connect', undefined, () => client.describeIndex(name));
      if ((description as { vectorType?: string }).vectorType === 'sparse') {
        refuse('indexName', name, 'the index is sparse; the Zerda store needs a dense index');
      }
      metric = toZerdaMetric(description.metric, 'index metric');
      if (metricSetting !== undefined && metric !== metricSetting) {
        const message = `index '${name}' uses the ${description.metric} metric; set metric: '${metric}' (or leave it out)`;
        refuse('metric', settings.metric, message);
      }
      if (sparse && metric !== 'dot') {
        fail(
          `index '${name}' uses the ${description.metric} metric, and Pinecone queries sparse values only on dotproduct indexes: create the index with metric 'dotproduct' (or leave out the sparse setting)`,
        );
      }
      described = description.dimension;
      host ??= description.host;
      if (!host) fail(`index '${name}' has no host yet; is it ready?`);
    }
    index = client.index({
      ...(name === undefined ? {} : { name }),
      ...(host === undefined ? {} : { host }),
    });
  }
  if (described === undefined && dimension === undefined) {
    const target = index;
    described = (await requests.run('connect', undefined, () => target.describeIndexStats())).dimension;
  }
  if (described !== undefined && dimension !== undefined && described !== dimension) {
    const fromSettings = settings.dimension !== undefined;
    refuse(
      fromSettings ? 'dimension' : 'embedder',
      dimension,
      `the index has dimension ${described}, the store's ${fromSettings ? 'settings say' : 'embedder produces'} ${dimension}`,
    );
  }
  return { index, metric, dimension: described };
}

function fail(message: string): never {
  throw new BackendError({ backend: 'pinecone', operation: 'connect', message });
}
