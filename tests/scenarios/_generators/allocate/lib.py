import yaml, uuid, os, datetime

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "allocate")
NS = "ns1"
BASE = datetime.datetime(2026, 1, 1, 0, 0, 0)
NOW = "2026-01-01T12:00:00Z"

class Flow(dict):
    pass

class Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data):
        return True

Dumper.add_representer(Flow, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v.items(), flow_style=True))

def ts(minutes):
    return (BASE + datetime.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")

def uid(kind, name):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "kai-scen/%s/%s" % (kind, name)))

def res(quota=-1, oqw=1, limit=-1):
    return {"quota": quota, "overQuotaWeight": oqw, "limit": limit}

def queue(name, parent=None, gpu=None, cpu=None, mem=None, priority=None, t=0):
    spec = {}
    if parent:
        spec["parentQueue"] = parent
    if priority is not None:
        spec["priority"] = priority
    spec["resources"] = {"gpu": gpu or res(), "cpu": cpu or res(), "memory": mem or res()}
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
            "metadata": {"name": name, "uid": uid("queue", name), "creationTimestamp": ts(t)},
            "spec": spec}

def std_queues(*leaves, **kw):
    """root queue 'dept' (unlimited) + leaf queues (name or (name, dict kwargs))."""
    out = [queue("dept", t=-100)]
    for i, l in enumerate(leaves):
        if isinstance(l, tuple):
            n, a = l
        else:
            n, a = l, {}
        a = dict(a)
        a.setdefault("t", -90 + i)
        out.append(queue(n, parent="dept", **a))
    return out

def prioclass(name, value, global_default=False):
    o = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": name}, "value": value}
    if global_default:
        o["globalDefault"] = True
    return o

def node(name, gpus=0, cpu="16", mem="64Gi", pods="110", labels=None, taints=None,
         ready=True, unschedulable=False, gpu_mem=None):
    lab = {"kubernetes.io/hostname": name}
    if gpu_mem is not None:
        lab["nvidia.com/gpu.memory"] = str(gpu_mem)
    if labels:
        lab.update(labels)
    alloc = {"cpu": cpu, "memory": mem, "pods": pods}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
    spec = {}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = taints
    o = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "uid": uid("node", name), "labels": lab}}
    if spec:
        o["spec"] = spec
    o["status"] = {"allocatable": alloc, "capacity": dict(alloc),
                   "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    return o

def podgroup(name, queue, min_member=1, prio=None, t=0, subgroups=None, uid_override=None):
    spec = {"minMember": min_member, "queue": queue}
    if prio:
        spec["priorityClassName"] = prio
    if subgroups:
        spec["subGroups"] = [{"name": n, "minMember": m} for n, m in subgroups]
    return {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": NS,
                         "uid": uid_override or uid("pg", name), "creationTimestamp": ts(t)},
            "spec": spec}

def pod(name, pg=None, gpu=0, cpu="1", mem="1Gi", t=0, annotations=None, labels=None,
        node_name=None, phase="Pending", deleting=False, scheduler="kai-scheduler",
        spec_extra=None, requests_extra=None, ns=NS):
    ann = {}
    if pg:
        ann["pod-group-name"] = pg
    if annotations:
        ann.update(annotations)
    md = {"name": name, "namespace": ns, "uid": uid("pod", ns + "/" + name),
          "creationTimestamp": ts(t)}
    if labels:
        md["labels"] = dict(labels)
    if ann:
        md["annotations"] = ann
    if deleting:
        md["deletionTimestamp"] = ts(700)
        md["deletionGracePeriodSeconds"] = 30
    req = {}
    if cpu is not None:
        req["cpu"] = cpu
    if mem is not None:
        req["memory"] = mem
    r = {"requests": req}
    if gpu:
        req["nvidia.com/gpu"] = str(gpu)
        r["limits"] = {"nvidia.com/gpu": str(gpu)}
    if requests_extra:
        req.update(requests_extra)
    spec = {"schedulerName": scheduler}
    if node_name:
        spec["nodeName"] = node_name
    spec["containers"] = [{"name": "main", "image": "busybox", "resources": r}]
    if spec_extra:
        spec.update(spec_extra)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec,
            "status": {"phase": phase}}

def running(name, node_name, **kw):
    kw.setdefault("phase", "Running")
    return pod(name, node_name=node_name, **kw)

def P(name):
    return NS + "/" + name

def scenario(path, description, objects, pods=None, podgroups=None, decisions=None,
             config=None, seed=None):
    exp = {}
    if pods:
        exp["pods"] = {k: Flow(v) for k, v in pods.items()}
    if podgroups:
        exp["podGroups"] = {k: Flow(v) for k, v in podgroups.items()}
    if decisions is not None:
        exp["decisions"] = decisions
    sc = {"apiVersion": "test.kai-cpp.io/v1", "kind": "Scenario",
          "description": " ".join(description.split()), "actions": "allocate"}
    if seed is not None:
        sc["seed"] = seed
    sc["now"] = NOW
    if config is not None:
        sc["config"] = config
    sc["expect"] = exp
    full = os.path.join(OUT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write("# Generated from the rules in shared/spec/kai-behaviour.md; edit freely.\n")
        yaml.dump_all([sc] + objects, f, Dumper=Dumper, sort_keys=False, default_flow_style=False,
                           width=100, allow_unicode=True)

B = lambda node=None, **kw: dict({"status": "Binding"}, **({"node": node} if node else {}), **kw)
PEND = {"status": "Pending"}
PIPE = lambda node=None: dict({"status": "Pipelined"}, **({"node": node} if node else {}))
RUN = {"status": "Running"}
GANG_FAIL = {"unschedulable": True, "reason": "PodSchedulingErrors",
             "messageContains": "are required for gang scheduling"}
OK = {"unschedulable": False}

def default_plugins(gpu="binpack", cpu="binpack"):
    gpuorder = "gpupack" if gpu == "binpack" else "gpuspread"
    sharing = ["gpusharingorder"] if gpu == "binpack" else []
    names = ["predicates", "proportion", "priority", "elastic", "kubeflow", "ray",
             "nodeavailability"] + sharing + [gpuorder, "resourcetype", "subgrouporder",
             "taskorder", "nominatednode", "dynamicresources"]
    pl = [{"name": n} for n in names]
    pl.append({"name": "nodeplacement", "arguments": {"gpu": gpu, "cpu": cpu}})
    pl += [{"name": n} for n in ["minruntime", "topology", "snapshot"]]
    return {"actions": "allocate", "tiers": [{"plugins": pl}]}
