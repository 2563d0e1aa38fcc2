// How the release site reaches the browser (server/src/assets.rs, xtask/src/compress.rs): the
// annotation page's script, WebAssembly and stylesheet come compressed, under a path naming their
// content's version, cacheable for good; a reload and a second visit fetch none of them again.
import { test, expect } from "@playwright/test";
import { startDemo, hydrated, logInOn, Server } from "./server";
import { record, Transfer } from "./network";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());

const PACKAGE = /\/v\/[0-9a-f]{16}\/pkg\/claimpool[^/]*\.(js|wasm|css)$/;
// The lead's pages' own modules and their loader (xtask/src/split.rs).
const SPLIT = /\/v\/[0-9a-f]{16}\/pkg\/(?!claimpool)[^/]+\.(wasm|js)$/;

test("the annotation page's files come compressed and cached, and a reload fetches none", async ({ browser }) => {
  // Logged in through one context; the page loads in a second one, whose cache is empty.
  const login = await browser.newContext();
  await logInOn(await login.newPage(), server, "ann1");
  const context = await browser.newContext({ storageState: await login.storageState() });
  const page = await context.newPage();
  const network = await record(page);

  await page.goto(`${server.url}/work/scifact-demo`);
  await hydrated(page);
  const first = network.transfers().filter((t) => PACKAGE.test(t.url));
  const kinds = first.map((t) => t.url.split(".").pop()).sort();
  expect(kinds).toEqual(["css", "js", "wasm"]);
  for (const t of first) {
    expect(t.status, t.url).toBe(200);
    expect(t.headers["content-encoding"], t.url).toBe("br");
    expect(t.headers["cache-control"], t.url).toContain("immutable");
  }
  const wasm = first.find((t) => t.url.endsWith(".wasm")) as Transfer;
  // Compressed on the wire: the main module itself is larger than 1 MB.
  const size = Number((await page.request.get(wasm.url, { headers: { "accept-encoding": "identity" } })).headers()["content-length"]);
  expect(size).toBeGreaterThan(1_000_000);
  expect(wasm.bytes).toBeLessThan(size / 3);
  const total = network.transfers().reduce((sum, t) => sum + t.bytes, 0);
  console.log(`annotation page, first load: ${total} bytes transferred (wasm ${wasm.bytes} of ${size})`);
  // Issue 39's budget, and none of the lead's page modules (xtask/src/split.rs).
  expect(total).toBeLessThanOrEqual(600_000);
  expect(network.transfers().filter((t) => SPLIT.test(t.url) && t.url.endsWith(".wasm")).map((t) => t.url)).toEqual([]);

  // A reload and a new visit: the package's files come from the cache.
  for (const again of [() => page.reload(), () => page.goto(`${server.url}/work/scifact-demo`)]) {
    network.clear();
    await again();
    await hydrated(page);
    const fetched = network.transfers().filter((t) => PACKAGE.test(t.url) && !t.cached && t.status !== 304);
    expect(fetched.map((t) => t.url)).toEqual([]);
  }
});

test("another version's path is not found and the plain path is revalidated", async ({ request }) => {
  const page = await request.get(`${server.url}/login`);
  const path = (await page.text()).match(/\/v\/([0-9a-f]{16})\/pkg\/claimpool\.css/);
  expect(path).not.toBeNull();
  const css = await request.get(`${server.url}/pkg/claimpool.css`);
  expect(css.headers()["cache-control"]).toBe("no-cache");
  const etag = css.headers()["etag"];
  const again = await request.get(`${server.url}/pkg/claimpool.css`, { headers: { "if-none-match": etag } });
  expect(again.status()).toBe(304);
  const other = (path as RegExpMatchArray)[1].replace(/^./, (c) => (c === "0" ? "1" : "0"));
  expect((await request.get(`${server.url}/v/${other}/pkg/claimpool.css`)).status()).toBe(404);
});

test("a lead's page fetches its own module, compressed and cached, and works", async ({ browser }) => {
  const page = await (await browser.newContext()).newPage();
  await logInOn(page, server, "lead");
  const network = await record(page);
  await page.goto(`${server.url}/lead/projects/scifact-demo`);
  await hydrated(page);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("scifact-demo");
  const split = network.transfers().filter((t) => SPLIT.test(t.url));
  expect(split.filter((t) => t.url.endsWith(".wasm")).length, "split modules fetched").toBeGreaterThan(0);
  for (const t of split) {
    expect(t.status, t.url).toBe(200);
    expect(t.headers["content-encoding"], t.url).toBe("br");
    expect(t.headers["cache-control"], t.url).toContain("immutable");
  }
  // A page reached from it in the browser (no new document) works too.
  await page.getByRole("link", { name: "Releases: export the collection" }).click();
  await expect(page).toHaveURL(/\/releases$/);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Releases");
});
