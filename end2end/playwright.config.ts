import { defineConfig } from "@playwright/test";

// Debian's Chromium, never a downloaded browser build (`npx playwright install` cannot work here).
export default defineConfig({
  testDir: "./tests",
  timeout: 240_000,
  expect: { timeout: 10_000 },
  workers: 1,
  reporter: "list",
  use: {
    headless: true,
    launchOptions: {
      executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
});
