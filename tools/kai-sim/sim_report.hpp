#pragma once
// kai-sim's output (docs/build-and-ci.md "kai-sim's output"): the session's result as JSON or as a readable table.

#include <ostream>
#include <string>

#include "actors/scheduler/core/session.hpp"

namespace kai::sim {

/// The result document: pods, decisions, podGroups, queues. Byte-identical for the same session.
/// `decisions` defaults to the session's own (several rounds pass all of theirs).
std::string render_json(const core::Session& ssn, const std::vector<events::Decision>* decisions = nullptr);
/// The same document written to `out` as it is produced (kai-sim's output at 150,000 pods is 55 MB).
void write_json(std::ostream& out, const core::Session& ssn, const std::vector<events::Decision>* decisions = nullptr);

/// One line per pod: POD, STATUS, NODE, GPU fraction, GPU group, reason.
std::string render_table(const core::Session& ssn);

/// Whether a pod group is reported unschedulable after the session.
bool is_unschedulable(const core::Session& ssn, const core::JobInfo& job);

}  // namespace kai::sim
