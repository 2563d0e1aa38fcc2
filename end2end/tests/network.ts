// What a page transfers, read from Chromium's own network events (the DevTools protocol): each
// response's status, headers, bytes on the wire and whether it came from the browser's cache.
import { Page } from "@playwright/test";

export interface Transfer {
  url: string;
  status: number;
  /// Bytes received for it, headers included (0 when served from the cache).
  bytes: number;
  cached: boolean;
  headers: Record<string, string>;
}

export interface Recorder {
  transfers: () => Transfer[];
  /// Chromium's network throttling (a DevTools profile), or none.
  throttle: (profile: NetworkProfile | null) => Promise<void>;
  clear: () => void;
}

export interface NetworkProfile {
  name: string;
  latency: number;
  downloadThroughput: number;
  uploadThroughput: number;
}

/// Chrome DevTools' presets, as its network panel defines them (bytes per second, ms).
export const FAST_4G: NetworkProfile = {
  name: "Fast 4G",
  latency: 60 * 2.75,
  downloadThroughput: ((9 * 1000 * 1000) / 8) * 0.9,
  uploadThroughput: ((1.5 * 1000 * 1000) / 8) * 0.9,
};
export const SLOW_4G: NetworkProfile = {
  name: "Slow 4G",
  latency: 150 * 3.75,
  downloadThroughput: ((1.6 * 1000 * 1000) / 8) * 0.9,
  uploadThroughput: ((750 * 1000) / 8) * 0.9,
};

export async function record(page: Page): Promise<Recorder> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  let byId = new Map<string, Transfer>();
  let fromCache = new Set<string>();
  cdp.on("Network.requestServedFromCache", (e: any) => fromCache.add(e.requestId));
  cdp.on("Network.responseReceived", (e: any) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(e.response.headers)) headers[k.toLowerCase()] = String(v);
    byId.set(e.requestId, {
      url: e.response.url,
      status: e.response.status,
      bytes: 0,
      cached: Boolean(e.response.fromDiskCache || e.response.fromMemoryCache),
      headers,
    });
  });
  cdp.on("Network.loadingFinished", (e: any) => {
    const t = byId.get(e.requestId);
    if (t) t.bytes = e.encodedDataLength;
  });
  return {
    transfers: () =>
      [...byId.entries()].map(([id, t]) => ({ ...t, cached: t.cached || fromCache.has(id) })),
    throttle: async (profile) => {
      await cdp.send("Network.emulateNetworkConditions", {
        offline: false,
        latency: profile?.latency ?? 0,
        downloadThroughput: profile?.downloadThroughput ?? -1,
        uploadThroughput: profile?.uploadThroughput ?? -1,
      });
    },
    clear: () => {
      byId = new Map();
      fromCache = new Set();
    },
  };
}
