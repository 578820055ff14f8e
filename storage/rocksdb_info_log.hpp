#pragma once
// RocksDB's informational log, sent to the process log (spdlog) instead of a LOG file in the event
// log's directory. On a full disk, RocksDB's own LOG file writer fails like any other; 7.8.3 (Debian)
// then aborts the process when its error handler writes to that failed writer again
// (WritableFileWriter::AssertFalseAndGetStatusForPrevError, seen on a full tmpfs: docs/degraded-modes.md).
// A logger that writes no file cannot fail that way, and RocksDB's warnings reach the operator.

#include <memory>

namespace rocksdb {
class Logger;
}

namespace kai::storage {

/// RocksDB warnings and errors as "rocksdb: ..." lines of the process log; informational ones dropped.
std::shared_ptr<rocksdb::Logger> make_rocksdb_info_log();

}  // namespace kai::storage
