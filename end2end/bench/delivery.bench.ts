// The annotation page's first load under Chromium's network throttling (DevTools' Fast 4G and
// Slow 4G profiles): bytes transferred and the time until the page has hydrated, against the
// release site. A measurement, not a test: `make bench-delivery` (or `npx playwright test -c
// bench.config.ts` with CLAIMPOOL_BIN and LEPTOS_SITE_ROOT set) prints the figures.
import { test } from "@playwright/test";
import { startDemo, logInOn, Server } from "../tests/server";
import { record, FAST_4G, SLOW_4G, NetworkProfile } from "../tests/network";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());

const RUNS = Number(process.env.RUNS ?? 3);

for (const profile of [null, FAST_4G, SLOW_4G] as (NetworkProfile | null)[]) {
  test(`first load of the annotation page, ${profile?.name ?? "unthrottled"}`, async ({ browser }) => {
    test.setTimeout(600_000);
    const login = await browser.newContext();
    await logInOn(await login.newPage(), server, "ann1");
    const state = await login.storageState();
    const times: number[] = [];
    let bytes = 0;
    for (let run = 0; run < RUNS; run++) {
      const context = await browser.newContext({ storageState: state });
      const page = await context.newPage();
      const network = await record(page);
      await network.throttle(profile);
      const start = Date.now();
      await page.goto(`${server.url}/work/scifact-demo`, { waitUntil: "commit" });
      await page.locator("body[data-hydrated=true]").waitFor({ timeout: 120_000 });
      times.push(Date.now() - start);
      bytes = network.transfers().reduce((sum, t) => sum + t.bytes, 0);
      await context.close();
    }
    times.sort((a, b) => a - b);
    console.log(
      `delivery: ${profile?.name ?? "unthrottled"}: ${bytes} bytes; hydrated after ${times.join(", ")} ms (median ${times[Math.floor(times.length / 2)]} ms)`,
    );
  });
}
