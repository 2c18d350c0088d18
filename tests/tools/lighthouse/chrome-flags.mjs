// Headless Debian Chromium as root on a machine with a closed network: no sandbox, and none of
// Chromium's own background connections (they are refused here, many at a time).
export const CHROME_FLAGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
export const CHROME_PATH = process.env.CHROME_PATH || "/usr/bin/chromium";
