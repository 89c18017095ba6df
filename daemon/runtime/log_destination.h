#pragma once
// Where the daemon's log goes: journald under systemd, stderr in a plain foreground, syslog when
// detached.
namespace heapd::daemon {

// The daemon's log sinks.
enum class log_destination {
    stderr_text,  // lines with time, pid and level, for a terminal or a file
    journal,      // sd_journal_send(3): one entry per event, with its syslog priority
    syslog,       // syslog(3), facility daemon
};

// True when $JOURNAL_STREAM ("DEVICE:INODE", systemd.exec(5)) names the file stderr is: stderr is
// connected to journald, so the log had better go to the journal with priorities.
bool stderr_is_journal();

// journal when stderr is connected to journald, stderr_text in another foreground, syslog when
// detached.
log_destination choose_log_destination(bool foreground);

}  // namespace heapd::daemon
