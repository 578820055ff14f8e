#pragma once
// Server-side printing: the meta.k8s.io/v1 Table that `kubectl get` asks for
// (Accept: application/json;as=Table;v=v1;g=meta.k8s.io).

#include "k8s/apiserver/store.hpp"

namespace kai::apiserver {

/// Converts one object or a list (`kind` ending in "List") of resource `r` to a Table. Columns: Pod
/// (Name, Ready, Status, Restarts, Age; wide: IP, Node, Nominated Node), Node (Name, Status, Roles,
/// Age, Version), custom resources (Name and the CRD's additionalPrinterColumns, simple dotted
/// paths), others (Name, Age).
Json to_table(const ResourceInfo& r, const Json& object_or_list);

/// "5s", "3m20s", "4h", "12d" like the real server's Age cells (apimachinery duration.HumanDuration).
std::string human_duration(int64_t seconds);

}  // namespace kai::apiserver
