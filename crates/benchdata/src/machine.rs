//! What the process used, where /proc tells.

/// Peak resident memory of this process in KiB (`VmHWM` of /proc/self/status), where available.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
