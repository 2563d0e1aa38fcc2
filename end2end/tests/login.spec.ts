import { test, expect } from "@playwright/test";
import { startDemo, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());

test("an annotator logs in and sees the home page", async ({ page }) => {
  await page.goto(`${server.url}/`);
  await expect(page).toHaveURL(/\/login\?next=/);
  await page.getByLabel("User name").fill("ann1");
  await page.getByLabel("Password").fill("ann1-demo");
  await page.getByLabel("Password").press("Enter");
  await expect(page.getByTestId("welcome")).toHaveText("Welcome, ann1");
  await expect(page.getByTestId("current-user")).toHaveText("ann1");
  await expect(page.getByTestId("queue-count")).toContainText("in your queue");
  // Annotators get no lead links.
  await expect(page.getByRole("link", { name: "Projects" })).toHaveCount(0);
});

test("a wrong password shows an error", async ({ page }) => {
  await page.goto(`${server.url}/login`);
  await page.getByLabel("User name").fill("ann2");
  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page.getByTestId("login-error")).toHaveText("wrong user name or password");
  await expect(page).toHaveURL(/\/login/);
});

test("a lead sees the demo project with its counts", async ({ page }) => {
  await page.goto(`${server.url}/login`);
  await page.getByLabel("User name").fill("lead");
  await page.getByLabel("Password").fill("lead-demo");
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page.getByTestId("welcome")).toBeVisible();
  await page.getByRole("link", { name: "Projects" }).first().click();
  await page.getByRole("link", { name: "scifact-demo" }).click();
  await expect(page.getByTestId("project-counts")).toContainText("443");
  await expect(page.getByTestId("claims-range")).toHaveText("1–40 of 40");
});

test("a login never leads off the site", async ({ page }) => {
  // Browsers drop tabs and line breaks from URLs: `/\t/evil.example` would become
  // `//evil.example`, another host. Such a `next` goes home instead.
  for (const next of ["/%09/evil.example/phish", "//evil.example", "/%0d%0a/evil.example", "https://evil.example/"]) {
    const context = await page.context().browser()!.newContext();
    const p = await context.newPage();
    await p.goto(`${server.url}/login?next=${next}`);
    await p.getByLabel("User name").fill("ann3");
    await p.getByLabel("Password").fill("ann3-demo");
    await p.getByLabel("Password").press("Enter");
    await expect(p.getByTestId("welcome")).toBeVisible();
    expect(new URL(p.url()).origin).toBe(new URL(server.url).origin);
    expect(new URL(p.url()).pathname).toBe("/");
    await context.close();
  }
  // A same-site path is followed.
  await page.goto(`${server.url}/login?next=/lead`);
  await page.getByLabel("User name").fill("lead");
  await page.getByLabel("Password").fill("lead-demo");
  await page.getByLabel("Password").press("Enter");
  await expect(page).toHaveURL(`${server.url}/lead`);
});
