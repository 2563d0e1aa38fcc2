// Accounts in the browser (issue 14): the admin creates a user and reads the one-time password
// once; the user logs in with it and changes their own password on their account page, which
// logs out their other session; the admin deactivates them and their session stops.
import { test, expect, Page, Browser } from "@playwright/test";
import { startDemo, logInOn, Server } from "./server";

let server: Server;
test.beforeAll(async () => {
  server = await startDemo();
});
test.afterAll(() => server?.stop());
test.describe.configure({ mode: "serial" });

async function logIn(browser: Browser, user: string, password: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  page.on("pageerror", (e) => {
    throw e;
  });
  await logInOn(page, server, user, password);
  return page;
}

test("an admin makes an account; its user changes the password; deactivation ends the session", async ({ browser }) => {
  const admin = await logIn(browser, "admin", "admin-demo");
  await admin.goto(`${server.url}/admin/users`);
  await expect(admin.locator("body")).toHaveAttribute("data-hydrated", "true", { timeout: 20_000 });
  const form = admin.getByTestId("new-user");
  await form.getByLabel("New user").fill("dora");
  await form.getByLabel("role").selectOption("annotator");
  await form.getByRole("button", { name: "Create" }).click();
  const secret = admin.getByTestId("one-time-password");
  await expect(secret).toContainText("dora's one-time password is");
  const oneTime = (await secret.locator("code").textContent())!.trim();
  expect(oneTime).toMatch(/^[a-z2-9]{4}(-[a-z2-9]{4}){5}$/);
  await expect(admin.locator('tr[data-user="dora"]')).toContainText("annotator");

  const dora = await logIn(browser, "dora", oneTime);
  const doraElsewhere = await logIn(browser, "dora", oneTime);
  await dora.getByTestId("current-user").click();
  await expect(dora).toHaveURL(/\/account$/);
  await dora.getByLabel("Current password").fill(oneTime);
  await dora.getByLabel(/New password/).fill("dora's own long password");
  await dora.getByRole("button", { name: "Change password" }).click();
  await expect(dora.getByTestId("password-changed")).toBeVisible();
  // This session stays; the other one has ended.
  await dora.goto(`${server.url}/`);
  await expect(dora.getByTestId("current-user")).toHaveText("dora");
  await doraElsewhere.goto(`${server.url}/`);
  await expect(doraElsewhere).toHaveURL(/\/login\?next=/);

  await admin.locator('tr[data-user="dora"]').getByRole("button", { name: "Deactivate" }).click();
  await expect(admin.locator('tr[data-user="dora"]')).toContainText("Reactivate");
  await dora.goto(`${server.url}/`);
  await expect(dora).toHaveURL(/\/login\?next=/);
});

test("a lead creates a project in the browser and adds an annotator to it", async ({ browser }) => {
  const lead = await logIn(browser, "lead", "lead-demo");
  await lead.goto(`${server.url}/lead`);
  await expect(lead.locator("body")).toHaveAttribute("data-hydrated", "true", { timeout: 20_000 });
  const form = lead.getByTestId("new-project");
  await form.getByLabel("New project").fill("campaign");
  await form.getByLabel("description").fill("made in the browser");
  await form.getByRole("button", { name: "Create" }).click();
  await expect(lead.getByTestId("project-created")).toContainText("Created campaign");
  await expect(lead.getByTestId("projects")).toContainText("campaign");
  await lead.getByTestId("project-created").getByRole("link", { name: "campaign" }).click();
  await expect(lead).toHaveURL(/\/lead\/projects\/campaign$/);
  const members = lead.getByTestId("members");
  await expect(members.locator('tr[data-member="lead"]')).toContainText("lead");
  await members.getByLabel("User").fill("ann3");
  await members.getByRole("button", { name: "Add" }).click();
  await expect(members.locator('tr[data-member="ann3"]')).toContainText("annotator");
  // The annotator now has the project; another lead's account would be refused on its pages.
  const ann = await logIn(browser, "ann3", "ann3-demo");
  const res = await ann.goto(`${server.url}/work/campaign`);
  expect(res?.status()).toBe(200);
  const other = await ann.goto(`${server.url}/lead/projects/campaign`);
  expect(other?.status()).toBe(403);
});
