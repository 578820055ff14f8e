import yaml, glob, sys
bad = 0
files = sorted(glob.glob("tests/scenarios/allocate/**/*.yaml", recursive=True))
for f in files:
    docs = [d for d in yaml.safe_load_all(open(f)) if d is not None]
    sc = [d for d in docs if d.get("kind") == "Scenario"]
    def err(m):
        global bad; bad += 1; print(f, m)
    if len(sc) != 1: err("scenario count %d" % len(sc)); continue
    sc = sc[0]
    if not sc.get("description"): err("no description")
    pods = {d["metadata"]["namespace"] + "/" + d["metadata"]["name"] for d in docs if d["kind"] == "Pod"}
    pgs = {d["metadata"]["namespace"] + "/" + d["metadata"]["name"] for d in docs if d["kind"] == "PodGroup"}
    names = [d["metadata"]["namespace"] + "/" + d["metadata"]["name"] for d in docs if d["kind"] == "Pod"]
    if len(names) != len(set(names)): err("dup pods")
    nodes = {d["metadata"]["name"] for d in docs if d["kind"] == "Node"}
    for k, v in sc["expect"].get("pods", {}).items():
        if k not in pods: err("expect unknown pod " + k)
        if "node" in v and v["node"] not in nodes: err("unknown node " + v["node"])
        if "sameGpuGroupAs" in v and v["sameGpuGroupAs"] not in pods: err("bad same")
        if v["status"] not in ("Binding","Pipelined","Releasing","Pending","Gated","Running","Bound","Succeeded","Failed"): err("status")
    for k in sc["expect"].get("podGroups", {}):
        if k not in pgs: err("expect unknown pg " + k)
    for d in docs:
        if d["kind"] == "Pod":
            if "uid" not in d["metadata"]: err("pod without uid")
            pg = d["metadata"].get("annotations", {}).get("pod-group-name")
            if pg and d["metadata"]["namespace"] + "/" + pg not in pgs and "ghost" not in pg: err("pod pg missing " + pg)
    preset = {d["spec"]["podName"] for d in docs if d["kind"] == "BindRequest"}
    binds = sum(1 for k, v in sc["expect"].get("pods", {}).items()
                if v["status"] in ("Binding", "Pipelined") and k.split("/")[1] not in preset)
    dec = sc["expect"].get("decisions")
    if dec is not None and binds > dec: err("decisions %s < expected binds %d" % (dec, binds))
print(len(files), "files,", bad, "problems")
