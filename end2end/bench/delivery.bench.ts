// The annotation page's first load under Chromium's network throttling (DevTools' Fast 4G and
// Slow 4G profiles): bytes transferred and the time until the page has hydrated, against the
// release site; and the same for the lead's report page, whose code comes in modules of its own
// after the main one (xtask/src/split.rs). A measurement, not a test: `make bench-delivery` (or `npx playwright test -c
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

const PAGES = [
  { name: "the annotation page", user: "ann1", path: "/work/scifact-demo" },
  { name: "the lead's report page", user: "lead", path: "/lead/projects/scifact-demo/report" },
];

for (const target of PAGES)
for (const profile of [null, FAST_4G, SLOW_4G] as (NetworkProfile | null)[]) {
  test(`first load of ${target.name}, ${profile?.name ?? "unthrottled"}`, async ({ browser }) => {
    test.setTimeout(600_000);
    const login = await browser.newContext();
    await logInOn(await login.newPage(), server, target.user);
    const state = await login.storageState();
    const times: number[] = [];
    let bytes = 0;
    for (let run = 0; run < RUNS; run++) {
      const context = await browser.newContext({ storageState: state });
      const page = await context.newPage();
      const network = await record(page);
      await network.throttle(profile);
      const start = Date.now();
      await page.goto(`${server.url}${target.path}`, { waitUntil: "commit" });
      await page.locator("body[data-hydrated=true]").waitFor({ timeout: 120_000 });
      times.push(Date.now() - start);
      bytes = network.transfers().reduce((sum, t) => sum + t.bytes, 0);
      await context.close();
    }
    times.sort((a, b) => a - b);
    console.log(
      `delivery: ${target.name}, ${profile?.name ?? "unthrottled"}: ${bytes} bytes; hydrated after ${times.join(", ")} ms (median ${times[Math.floor(times.length / 2)]} ms)`,
    );
  });
}
