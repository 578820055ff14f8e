#pragma once
// The event log holds every pod of the cluster: only the daemon's user may read it (docs: README.md
// "Operations", the event log's permissions).

#include <string>

#include "k8s/model/status.hpp"

namespace kai::daemon {

/// Sets the process umask to 077, so that every file created from now on (RocksDB's SST, WAL,
/// MANIFEST, LOG and OPTIONS files, the webhook certificate) is owner-only, then creates `dir` when
/// missing and makes it 0700 and what it already holds 0700 (directories) / 0600 (files): a log
/// written by an earlier version with 0755 / 0644 is tightened too. Call before the log opens.
model::Status make_owner_only(const std::string& dir);

}  // namespace kai::daemon
