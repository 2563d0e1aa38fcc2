// A lead registers webhooks on the project's page; a release made on the releases page reaches
// a receiver as a signed event (verified here with node's own HMAC), and the delivery to a
// receiver that is down is retried, then shown failed on the page.
import { test, expect } from "@playwright/test";
import { createHmac } from "node:crypto";
import { createServer, IncomingHttpHeaders, Server as HttpServer } from "node:http";
import { freePort, hydrated, logInOn, startDemo, Server, violations } from "./server";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let receiver: HttpServer;
let receiverUrl: string;
const received: Received[] = [];

test.beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((ok) => receiver.listen(0, "127.0.0.1", () => ok()));
  const address = receiver.address();
  receiverUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/claimpool`;
  server = await startDemo({ args: ["--webhook-attempts", "2", "--webhook-retry-secs", "1"] });
});
test.afterAll(() => {
  server?.stop();
  receiver?.close();
});

test("a release reaches the receiver signed, and a receiver that is down is shown failed", async ({ page }) => {
  await logInOn(page, server, "lead");
  await page.goto(`${server.url}/lead/projects/scifact-demo`);
  await hydrated(page);
  await page.getByTestId("webhooks-link").click();
  await expect(page.getByRole("heading", { name: "Webhooks", level: 1 })).toBeVisible();
  await hydrated(page);
  await expect(page.getByTestId("webhooks-none")).toBeVisible();
  expect(await violations(page)).toEqual([]);

  // A receiver that answers, for the default events (final labels and releases).
  await page.getByTestId("webhook-url").fill(receiverUrl);
  await page.getByTestId("webhook-add").click();
  await expect(page.getByTestId("webhook-created")).toContainText("Webhook #1 added");
  const secret = (await page.getByTestId("webhook-secret").innerText()).trim();
  expect(secret).toMatch(/^[0-9a-f]{64}$/);
  // One that is down, for releases only.
  const down = `http://127.0.0.1:${await freePort()}/gone`;
  await page.getByTestId("webhook-url").fill(down);
  await page.getByTestId("webhook-event-label.final").uncheck();
  await page.getByTestId("webhook-add").click();
  await expect(page.getByTestId("webhook-created")).toContainText("Webhook #2 added");
  await expect(page.getByTestId("webhooks").locator("tbody tr")).toHaveCount(2);

  await page.goto(`${server.url}/lead/projects/scifact-demo/releases`);
  await hydrated(page);
  await page.getByTestId("release-create").click();
  await expect(page.getByTestId("release-result")).toContainText("Release 1 recorded");

  await expect.poll(() => received.filter((r) => r.headers["claimpool-event"] === "release.made").length, { timeout: 20_000 }).toBe(1);
  const release = received.find((r) => r.headers["claimpool-event"] === "release.made")!;
  const timestamp = String(release.headers["claimpool-timestamp"]);
  const expected = `v1=${createHmac("sha256", secret).update(`${timestamp}.${release.body}`).digest("hex")}`;
  expect(release.headers["claimpool-signature"]).toBe(expected);
  const body = JSON.parse(release.body);
  expect(body.event).toBe("release.made");
  expect(body.project).toBe("scifact-demo");
  expect(body.data.number).toBe(1);

  // The receiver that is down: two attempts a second apart, then failed, on the page.
  await page.goto(`${server.url}/lead/projects/scifact-demo/webhooks`);
  await hydrated(page);
  const failed = page.locator('[data-testid="deliveries"] tr[data-state="failed"]');
  await expect(async () => {
    await page.getByTestId("webhooks-refresh").click();
    await expect(failed).toHaveCount(1, { timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
  await expect(failed).toContainText("release.made");
  await expect(failed).toContainText("cannot connect");
  await expect(failed.locator("td").nth(4)).toHaveText("2");
  await expect(page.locator('[data-testid="deliveries"] tr[data-state="delivered"]')).toHaveCount(1);
  expect(await violations(page)).toEqual([]);
});
