import { defineConfig } from "@playwright/test";

// Debian's Chromium, never a downloaded browser build (`npx playwright install` cannot work here).
export default defineConfig({
  testDir: "./tests",
  timeout: 240_000,
  expect: { timeout: 10_000 },
  // Two test files at once, each with its own demo server: on 2 cores the suite took 2.3 min
  // instead of 3.2 (2026-12-02).
  workers: 2,
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
