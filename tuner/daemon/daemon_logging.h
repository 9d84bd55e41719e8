// nccltuned's log: one line per event on stderr, which systemd sends to the journal. Under
// systemd (JOURNAL_STREAM set) each line starts with its syslog priority ("<4>" for warnings,
// sd-daemon(3)), so `journalctl -p warning -u nccltuned` shows drift and failures only.
#pragma once

namespace nccltune {

// `verbosity`: 0 = info and above, 1+ = debug. NCCLTUNE_LOG_LEVEL wins when set.
void setup_daemon_logging(int verbosity);

}  // namespace nccltune
