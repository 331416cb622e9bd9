"""A cuzk.v1.ProvingEngine client for baton's daemon tests, with stubs generated from our .proto.

Run by tests/daemon_python.rs as `python3 cuzk_client.py SCENARIO --grpc HOST:PORT --http
HOST:PORT --out RESULT.json [--token T]`. Each scenario asserts what it can see on the wire and
writes what the Rust side must check (proof bytes to verify, job ids) to RESULT.json.
"""

import argparse
import atexit
import base64
import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# --curio-proto: stubs from Curio's own definitions (tests/python/curio), without baton's
# extensions, as Curio's client has them; else from baton's .proto.
CURIO_PROTO = "--curio-proto" in sys.argv
PROTO_DIR = os.path.join(ROOT, "tests/python/curio") if CURIO_PROTO else os.path.join(ROOT, "proto")
# baton's built-in kinds, by number: Curio's definitions do not name them (proto3 enums are open).
BATON_SYNTHETIC = 1001
BATON_MIMC = 1002


def load_stubs():
    """Generates the Python stubs from proto/cuzk/v1/proving.proto with grpcio-tools."""
    from grpc_tools import protoc
    import grpc_tools

    out = tempfile.mkdtemp(prefix="baton-stubs-")
    # The generated modules are loaded once; the directory goes when the client exits.
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    rc = protoc.main([
        "protoc", f"-I{PROTO_DIR}", f"-I{include}", f"--python_out={out}",
        f"--grpc_python_out={out}", os.path.join(PROTO_DIR, "cuzk/v1/proving.proto"),
    ])
    assert rc == 0, f"grpcio-tools failed on {PROTO_DIR} (exit {rc})"
    sys.path.insert(0, out)
    from cuzk.v1 import proving_pb2, proving_pb2_grpc
    return proving_pb2, proving_pb2_grpc


import grpc  # noqa: E402

pb, pbg = load_stubs()
CALL_TIMEOUT = 300


def channel(addr):
    return grpc.insecure_channel(addr, options=[
        ("grpc.max_send_message_length", 512 << 20),
        ("grpc.max_receive_message_length", 512 << 20),
    ])


def builtin(constraints=1024, seed=1, partitions=1, delay_ms=0, kind=None, priority=0, rid="",
            fail_while=None):
    body = {"constraints": constraints, "seed": seed, "partitions": partitions}
    if delay_ms:
        body["synth_delay_ms"] = delay_ms
    if fail_while:
        body["fail_while"] = fail_while
    return pb.SubmitProofRequest(
        request_id=rid,
        proof_kind=kind if kind is not None else BATON_SYNTHETIC,
        priority=priority,
        vanilla_proof=json.dumps(body).encode(),
    )


def expect_error(code, fn, *args, needle=None, **kw):
    try:
        fn(*args, timeout=CALL_TIMEOUT, **kw)
    except grpc.RpcError as e:
        assert e.code() == code, f"expected {code}, got {e.code()}: {e.details()}"
        if needle:
            assert needle in e.details(), f"{needle!r} not in {e.details()!r}"
        return e.details()
    raise AssertionError(f"expected {code}, the call succeeded")


def completed(result, what):
    assert result.status == pb.AwaitProofResponse.COMPLETED, \
        f"{what}: status {result.status}, error {result.error_message!r}"
    assert len(result.proof) % 192 == 0 and result.proof, f"{what}: {len(result.proof)} proof bytes"
    return result.proof.hex()


def until_running(stub, seconds=120):
    """GetStatus until some job is in progress and the ledger holds its bytes."""
    deadline = time.time() + seconds
    while True:
        st = stub.GetStatus(pb.GetStatusRequest(), timeout=CALL_TIMEOUT)
        # Curio's definitions have no ledger fields (a baton extension): in progress is enough.
        charged = st.ledger_charged_bytes if hasattr(st, "ledger_charged_bytes") else 1
        if charged > 0 and sum(q.in_progress for q in st.queues) >= 1:
            return st
        assert time.time() < deadline, f"nothing started: {st}"
        time.sleep(0.02)


def ledger_settles(stub, seconds=60):
    """GetStatus until the ledger holds no bytes; the metrics text must agree."""
    deadline = time.time() + seconds
    while True:
        st = stub.GetStatus(pb.GetStatusRequest(), timeout=CALL_TIMEOUT)
        if st.ledger_charged_bytes == 0:
            break
        assert time.time() < deadline, f"ledger still holds {st.ledger_charged_bytes} bytes"
        time.sleep(0.05)
    text = stub.GetMetrics(pb.GetMetricsRequest(), timeout=CALL_TIMEOUT).prometheus_text
    for line in text.splitlines():
        if line.startswith("baton_ledger_bytes{"):
            assert line.rsplit(" ", 1)[1] == "0", f"metrics disagree: {line}"
    return st


def http_get(http, path):
    with urllib.request.urlopen(f"http://{http}{path}", timeout=10) as r:
        return r.status, r.read().decode()


def scenario_basic(stub, args, out):
    proofs = []
    # Submit + Await.
    sub = stub.SubmitProof(builtin(seed=11, partitions=2, rid="basic-submit"), timeout=CALL_TIMEOUT)
    assert sub.job_id.startswith("basic-submit#"), sub.job_id
    res = stub.AwaitProof(pb.AwaitProofRequest(job_id=sub.job_id), timeout=CALL_TIMEOUT)
    proofs.append({"job": sub.job_id, "circuit": "synthetic", "constraints": 1024, "seed": 11,
                   "partitions": 2, "proof": completed(res, "submit/await")})
    assert res.total_ms >= res.srs_load_ms
    assert res.job_id == sub.job_id, res.job_id
    # The same request id with the same request: the same (completed) job, the same bytes.
    again = stub.SubmitProof(builtin(seed=11, partitions=2, rid="basic-submit"), timeout=CALL_TIMEOUT)
    assert again.job_id == sub.job_id
    res2 = stub.AwaitProof(pb.AwaitProofRequest(job_id=sub.job_id), timeout=CALL_TIMEOUT)
    assert res2.proof == res.proof, "answered twice with different bytes"
    # The same request id with another request: a job of its own, with its own proof.
    other = stub.SubmitProof(builtin(seed=12, rid="basic-submit"), timeout=CALL_TIMEOUT)
    assert other.job_id != sub.job_id and other.job_id.startswith("basic-submit#"), other.job_id
    res3 = stub.AwaitProof(pb.AwaitProofRequest(job_id=other.job_id), timeout=CALL_TIMEOUT)
    proofs.append({"job": other.job_id, "circuit": "synthetic", "constraints": 1024, "seed": 12,
                   "partitions": 1, "proof": completed(res3, "same id, other request")})
    # Awaited by its request id once every job under it ended: the newest one.
    by_rid = stub.AwaitProof(pb.AwaitProofRequest(job_id="basic-submit"), timeout=CALL_TIMEOUT)
    assert by_rid.job_id == other.job_id and by_rid.proof == res3.proof, by_rid.job_id
    # Prove, MiMC kind, daemon-chosen id.
    pr = stub.Prove(pb.ProveRequest(submit=builtin(seed=5, kind=BATON_MIMC)), timeout=CALL_TIMEOUT)
    proofs.append({"job": pr.result.job_id, "circuit": "mimc", "constraints": 1024, "seed": 5,
                   "partitions": 1, "proof": completed(pr.result, "prove")})
    # Preload, status, evict.
    pre = stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id="baton-synthetic-2048"), timeout=CALL_TIMEOUT)
    assert not pre.already_loaded
    pre2 = stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id="baton-synthetic-2048"), timeout=CALL_TIMEOUT)
    assert pre2.already_loaded and pre2.load_time_ms == 0
    st = stub.GetStatus(pb.GetStatusRequest(), timeout=CALL_TIMEOUT)
    keys = {k.circuit_id: k for k in st.loaded_srs}
    assert "baton-synthetic-2048" in keys, keys
    assert keys["baton-synthetic-2048"].size_bytes > 0 and keys["baton-synthetic-2048"].ref_count == 0
    assert st.total_proofs_completed >= 2 and st.gpus, st
    assert st.ledger_budget_bytes > 0
    ev = stub.EvictSRS(pb.EvictSrsRequest(circuit_id="baton-synthetic-2048"), timeout=CALL_TIMEOUT)
    assert ev.was_loaded and ev.freed_bytes == keys["baton-synthetic-2048"].size_bytes, ev
    ev2 = stub.EvictSRS(pb.EvictSrsRequest(circuit_id="baton-synthetic-2048"), timeout=CALL_TIMEOUT)
    assert not ev2.was_loaded and ev2.freed_bytes == 0
    st = stub.GetStatus(pb.GetStatusRequest(), timeout=CALL_TIMEOUT)
    assert "baton-synthetic-2048" not in {k.circuit_id for k in st.loaded_srs}
    # A key in use cannot be evicted.
    stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id="baton-synthetic-1024"), timeout=CALL_TIMEOUT)
    busy = stub.SubmitProof(builtin(seed=21, delay_ms=1500, rid="basic-busy"), timeout=CALL_TIMEOUT)
    time.sleep(0.3)
    expect_error(grpc.StatusCode.FAILED_PRECONDITION, stub.EvictSRS,
                 pb.EvictSrsRequest(circuit_id="baton-synthetic-1024"), needle="in use")
    res = stub.AwaitProof(pb.AwaitProofRequest(job_id=busy.job_id), timeout=CALL_TIMEOUT)
    proofs.append({"job": busy.job_id, "circuit": "synthetic", "constraints": 1024, "seed": 21,
                   "partitions": 1, "proof": completed(res, "busy")})
    assert stub.EvictSRS(pb.EvictSrsRequest(circuit_id="baton-synthetic-1024"),
                         timeout=CALL_TIMEOUT).was_loaded
    # Metrics: the gRPC text and /metrics agree on the names; /healthz answers.
    text = stub.GetMetrics(pb.GetMetricsRequest(), timeout=CALL_TIMEOUT).prometheus_text
    assert "baton_proofs_total" in text and "baton_ledger_budget_bytes" in text
    code, body = http_get(args.http, "/metrics")
    assert code == 200 and "baton_proofs_total" in body
    assert http_get(args.http, "/healthz") == (200, "ok\n")
    # Unknown job.
    expect_error(grpc.StatusCode.NOT_FOUND, stub.AwaitProof, pb.AwaitProofRequest(job_id="nope"))
    expect_error(grpc.StatusCode.NOT_FOUND, stub.CancelProof, pb.CancelProofRequest(job_id="nope"))
    ledger_settles(stub)
    out["proofs"] = proofs


def scenario_bad_input(stub, args, out):
    """Each bad request gets its status while a good job in flight still proves."""
    good = stub.SubmitProof(builtin(seed=31, delay_ms=500, rid="bad-good"), timeout=CALL_TIMEOUT)
    ch = channel(args.grpc)
    raw = ch.unary_unary("/cuzk.v1.ProvingEngine/SubmitProof")
    msg = expect_error(grpc.StatusCode.INTERNAL, raw, b"\xff\xff\xff\xff\x0f")
    assert "decode" in msg, msg
    expect_error(grpc.StatusCode.INVALID_ARGUMENT, stub.SubmitProof,
                 pb.SubmitProofRequest(proof_kind=77, vanilla_proof=b"{}"), needle="unknown proof_kind 77")
    expect_error(grpc.StatusCode.INVALID_ARGUMENT, stub.SubmitProof,
                 pb.SubmitProofRequest(vanilla_proof=b"{}"), needle="proof_kind is not set")
    expect_error(grpc.StatusCode.INVALID_ARGUMENT, stub.SubmitProof,
                 pb.SubmitProofRequest(proof_kind=BATON_SYNTHETIC), needle="vanilla_proof is empty")
    expect_error(grpc.StatusCode.INVALID_ARGUMENT, stub.SubmitProof,
                 pb.SubmitProofRequest(proof_kind=BATON_SYNTHETIC, vanilla_proof=b"\x00garbage{"),
                 needle="not the expected JSON")
    expect_error(grpc.StatusCode.INVALID_ARGUMENT, stub.SubmitProof,
                 builtin(constraints=1 << 30), needle="constraints must be within")
    expect_error(grpc.StatusCode.INVALID_ARGUMENT, stub.SubmitProof,
                 pb.SubmitProofRequest(proof_kind=BATON_SYNTHETIC, priority=9,
                                       vanilla_proof=b'{"constraints":1024,"seed":1}'),
                 needle="unknown priority 9")
    expect_error(grpc.StatusCode.INVALID_ARGUMENT, stub.Prove, pb.ProveRequest(), needle="submit")
    expect_error(grpc.StatusCode.INVALID_ARGUMENT, stub.PreloadSRS,
                 pb.PreloadSrsRequest(circuit_id="porep-99g"), needle="unknown circuit id")
    for kind in (pb.POREP_SEAL_COMMIT, pb.SNAP_DEALS_UPDATE, pb.WINDOW_POST_PARTITION, pb.WINNING_POST):
        req = pb.SubmitProofRequest(proof_kind=kind, vanilla_proof=b"garbage")
        name = pb.ProofKind.Name(kind)
        details = None
        try:
            stub.SubmitProof(req, timeout=CALL_TIMEOUT)
        except grpc.RpcError as e:
            details = (e.code(), e.details())
        assert details is not None, f"{name} with a garbage vanilla proof was accepted"
        assert details[0] in (grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.INVALID_ARGUMENT), details
        if details[0] == grpc.StatusCode.UNIMPLEMENTED:
            assert name in details[1], details
        out.setdefault("kinds", {})[name] = details[0].name
    # Oversized: refused from the frame header, before the message is read.
    big = pb.SubmitProofRequest(proof_kind=BATON_SYNTHETIC, vanilla_proof=b"x" * (3 << 20))
    expect_error(grpc.StatusCode.RESOURCE_EXHAUSTED, stub.SubmitProof, big,
                 needle="max_request_bytes")
    res = stub.AwaitProof(pb.AwaitProofRequest(job_id=good.job_id), timeout=CALL_TIMEOUT)
    out["proofs"] = [{"job": good.job_id, "circuit": "synthetic", "constraints": 1024, "seed": 31,
                      "partitions": 1, "proof": completed(res, "good job beside bad input")}]


def scenario_slow_http(stub, args, out):
    """A client that connects to /metrics and sends nothing blocks neither HTTP nor gRPC."""
    host, port = args.http.rsplit(":", 1)
    silent = socket.create_connection((host, int(port)))
    half = socket.create_connection((host, int(port)))
    half.sendall(b"GET /metr")
    t = time.time()
    code, body = http_get(args.http, "/metrics")
    assert code == 200 and "baton_" in body
    text = stub.GetMetrics(pb.GetMetricsRequest(), timeout=CALL_TIMEOUT).prometheus_text
    names = lambda s: {l.split("{")[0].split(" ")[0] for l in s.splitlines() if l.startswith("baton_")}
    assert names(text) == names(body), names(text) ^ names(body)
    assert time.time() - t < 5
    silent.close()
    half.close()


def scenario_auth(stub, args, out):
    """A listener other machines can reach: every call needs the token."""
    ch = channel(args.grpc)
    plain = pbg.ProvingEngineStub(ch)
    expect_error(grpc.StatusCode.UNAUTHENTICATED, plain.GetStatus, pb.GetStatusRequest(),
                 needle="bearer token")
    expect_error(grpc.StatusCode.UNAUTHENTICATED, plain.GetStatus, pb.GetStatusRequest(),
                 metadata=[("authorization", "Bearer wrong")], needle="wrong")
    expect_error(grpc.StatusCode.UNAUTHENTICATED, plain.SubmitProof, builtin(seed=3),
                 metadata=[("authorization", "Basic " + args.token)])
    good = [("authorization", "Bearer " + args.token)]
    st = plain.GetStatus(pb.GetStatusRequest(), timeout=CALL_TIMEOUT, metadata=good)
    assert st.ledger_budget_bytes > 0
    pr = plain.Prove(pb.ProveRequest(submit=builtin(seed=41)), timeout=CALL_TIMEOUT, metadata=good)
    out["proofs"] = [{"job": pr.result.job_id, "circuit": "synthetic", "constraints": 1024,
                      "seed": 41, "partitions": 1, "proof": completed(pr.result, "with token")}]


def scenario_tls(stub, args, out):
    """TLS: a client trusting the daemon's certificate proves; a plaintext one gets nowhere."""
    with open(args.ca, "rb") as f:
        creds = grpc.ssl_channel_credentials(root_certificates=f.read())
    ch = grpc.secure_channel(args.grpc, creds, options=[("grpc.ssl_target_name_override", "localhost")])
    tls = pbg.ProvingEngineStub(ch)
    pr = tls.Prove(pb.ProveRequest(submit=builtin(seed=51)), timeout=CALL_TIMEOUT)
    out["proofs"] = [{"job": pr.result.job_id, "circuit": "synthetic", "constraints": 1024,
                      "seed": 51, "partitions": 1, "proof": completed(pr.result, "over TLS")}]
    expect_error(grpc.StatusCode.UNAVAILABLE, stub.GetStatus, pb.GetStatusRequest())


def prove(stub, req):
    """Prove, as Curio calls it; returns the AwaitProofResponse."""
    return stub.Prove(pb.ProveRequest(submit=req), timeout=CALL_TIMEOUT).result


def in_parallel(calls, stagger=0.0):
    """Runs each zero-argument call on its own thread; returns their results in order."""
    results = [None] * len(calls)
    errors = []

    def run(i):
        try:
            results[i] = calls[i]()
        except Exception as e:  # noqa: BLE001 - reported below with its index
            errors.append((i, e))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
        time.sleep(stagger)
    for t in threads:
        t.join()
    assert not errors, errors
    return results


def flag_file(args, name):
    """A file beside the result whose existence makes `fail_while` jobs fail."""
    return os.path.join(os.path.dirname(os.path.abspath(args.out)), name)


def scenario_restart_before(stub, args, out):
    """Jobs in every state, two of them under one request id, one failed; then the test
    SIGKILLs the daemon."""
    done = prove(stub, builtin(seed=61, rid="r-done"))
    jobs = {done.job_id: {"rid": "r-done", "seed": 61, "delay": 0,
                          "proof": completed(done, "before the kill")}}
    flag = flag_file(args, "restart-fail.flag")
    open(flag, "w").close()
    failed = prove(stub, builtin(seed=67, rid="r-fail", fail_while=flag))
    assert failed.status == pb.AwaitProofResponse.FAILED, failed
    jobs[failed.job_id] = {"rid": "r-fail", "seed": 67, "delay": 0, "failed": flag}
    for rid, seed, delay in (("r-run", 62, 4000), ("r-q1", 63, 300), ("r-q2", 64, 300),
                             ("r-shared", 65, 300), ("r-shared", 66, 300)):
        sub = stub.SubmitProof(builtin(seed=seed, delay_ms=delay, rid=rid), timeout=CALL_TIMEOUT)
        assert sub.job_id not in jobs, f"{sub.job_id} given twice"
        jobs[sub.job_id] = {"rid": rid, "seed": seed, "delay": delay}
    until_running(stub)
    last = [j for j, v in jobs.items() if v["seed"] == 66][0]
    r = stub.AwaitProof(pb.AwaitProofRequest(job_id=last, timeout_ms=50), timeout=CALL_TIMEOUT)
    assert r.status == pb.AwaitProofResponse.TIMEOUT, r.status
    out["jobs"] = jobs


def scenario_restart_after(stub, args, out):
    """After the restart: every job finishes with the proof of its own request, the finished
    proof is served unchanged, and the failed request runs again when it is sent again."""
    with open(args.prev) as f:
        jobs = json.load(f)["jobs"]
    proofs = []
    for jid, j in jobs.items():
        req = builtin(seed=j["seed"], delay_ms=j["delay"], rid=j["rid"])
        if "failed" in j:
            res = stub.AwaitProof(pb.AwaitProofRequest(job_id=jid), timeout=CALL_TIMEOUT)
            assert res.status == pb.AwaitProofResponse.FAILED, (jid, res.status)
            os.remove(j["failed"])
            retry = prove(stub, builtin(seed=j["seed"], rid=j["rid"], fail_while=j["failed"]))
            assert retry.job_id != jid, "a failed job was replayed to its retry"
            proofs.append({"job": retry.job_id, "circuit": "synthetic", "constraints": 1024,
                           "seed": j["seed"], "partitions": 1,
                           "proof": completed(retry, f"{jid} retried after the restart")})
            continue
        res = stub.AwaitProof(pb.AwaitProofRequest(job_id=jid), timeout=CALL_TIMEOUT)
        hexproof = completed(res, f"{jid} after the restart")
        assert res.job_id == jid, (res.job_id, jid)
        if "proof" in j:
            assert hexproof == j["proof"], f"{jid} answered twice with different bytes"
        again = stub.SubmitProof(req, timeout=CALL_TIMEOUT)
        assert again.job_id == jid, (again.job_id, jid)
        res2 = stub.AwaitProof(pb.AwaitProofRequest(job_id=jid), timeout=CALL_TIMEOUT)
        assert res2.proof.hex() == hexproof, f"{jid}: a resubmission changed the answer"
        proofs.append({"job": jid, "circuit": "synthetic", "constraints": 1024, "seed": j["seed"],
                       "partitions": 1, "proof": hexproof})
    out["proofs"] = proofs


def scenario_curio(stub, args, out):
    """Curio's request semantics through Curio's own definitions, calling only Prove as
    Curio does: a request id is a label, a job's identity is its payload."""
    proofs = []

    def keep(r, seed, what):
        proofs.append({"job": r.job_id, "circuit": "synthetic", "constraints": 1024,
                       "seed": seed, "partitions": 1, "proof": completed(r, what)})

    # A reorg: the same sector's PoRep again under its old id, with a new seed.
    a = prove(stub, builtin(seed=201, rid="porep-1000-7"))
    b = prove(stub, builtin(seed=202, rid="porep-1000-7"))
    keep(a, 201, "porep before the reorg")
    keep(b, 202, "porep after the reorg")
    assert a.job_id != b.job_id and a.proof != b.proof, "the reorged PoRep got the old proof"
    # A retry after a failure runs again (never replays the failure), and proves once the
    # cause is gone.
    flag = flag_file(args, "curio-fail.flag")
    open(flag, "w").close()
    failing = builtin(seed=203, rid="porep-1000-8", fail_while=flag)
    f1 = prove(stub, failing)
    f2 = prove(stub, failing)
    for f in (f1, f2):
        assert f.status == pb.AwaitProofResponse.FAILED and f.error_message, f
    assert f1.job_id != f2.job_id, "a failed job was replayed to its retry"
    os.remove(flag)
    ok = prove(stub, failing)
    assert ok.job_id not in (f1.job_id, f2.job_id)
    keep(ok, 203, "the retry after the failures")
    # A cancelled job is not replayed either.
    snap = builtin(seed=204, delay_ms=1500, rid="snap-1000-9")
    sub = stub.SubmitProof(snap, timeout=CALL_TIMEOUT)
    stub.CancelProof(pb.CancelProofRequest(job_id=sub.job_id), timeout=CALL_TIMEOUT)
    again = prove(stub, snap)
    assert again.job_id != sub.job_id
    keep(again, 204, "re-sent after a cancel")
    # WindowPoSt partitions of one deadline: one id, as Curio formats it, different payloads,
    # all at once; each caller gets the proof of what it sent.
    rid = "wdpost-1000-0-[12 34 56 78 90 1 2 3]"
    seeds = [211, 212, 213]
    parts = in_parallel([lambda s=s: prove(stub, builtin(seed=s, delay_ms=300, rid=rid,
                                                          priority=pb.HIGH))
                         for s in seeds])
    assert len({p.job_id for p in parts}) == 3, [p.job_id for p in parts]
    for s, p in zip(seeds, parts):
        keep(p, s, f"WindowPoSt partition seed {s}")
    # The same bytes while the first call runs: one job, both callers answered with it.
    win = builtin(seed=221, delay_ms=1500, rid="winpost-1000-0011223344556677")
    pair = in_parallel([lambda: prove(stub, win), lambda: prove(stub, win)], stagger=0.3)
    assert pair[0].job_id == pair[1].job_id, [p.job_id for p in pair]
    assert pair[0].proof == pair[1].proof
    keep(pair[0], 221, "WinningPoSt sent twice at once")
    # Sent again once it completed: the same proof, served from the journal.
    served = prove(stub, win)
    assert served.job_id == pair[0].job_id and served.proof == pair[0].proof
    out["proofs"] = proofs


def scenario_drain(stub, args, out):
    """SIGTERM drains: new jobs are refused, accepted ones still finish and are answered."""
    import signal
    for rid, seed in (("d-1", 71), ("d-2", 72)):
        stub.SubmitProof(builtin(seed=seed, delay_ms=1000, rid=rid), timeout=CALL_TIMEOUT)
    os.kill(int(args.pid), signal.SIGTERM)
    time.sleep(0.3)
    expect_error(grpc.StatusCode.UNAVAILABLE, stub.SubmitProof, builtin(seed=73), needle="shutting down")
    proofs = []
    for rid, seed in (("d-1", 71), ("d-2", 72)):
        res = stub.AwaitProof(pb.AwaitProofRequest(job_id=rid), timeout=CALL_TIMEOUT)
        proofs.append({"job": rid, "circuit": "synthetic", "constraints": 1024, "seed": seed,
                       "partitions": 1, "proof": completed(res, f"{rid} while draining")})
    out["proofs"] = proofs


def await_all(stub, ids):
    """Awaits every id on its own thread; returns {id: (monotonic end time, response)}."""
    done = {}

    def wait(i):
        r = stub.AwaitProof(pb.AwaitProofRequest(job_id=i), timeout=CALL_TIMEOUT)
        done[i] = (time.monotonic(), r)

    threads = [threading.Thread(target=wait, args=(i,)) for i in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done


def scenario_priority(stub, args, out):
    """The queue full of LOW jobs; a CRITICAL one submitted last is answered before them."""
    low = [f"p-low-{i}" for i in range(6)]
    # The first LOW job holds the worker before the others come: jobs are admitted in
    # acceptance order while they wait, but an idle worker takes whichever job is ready first
    # (the first job's key load makes several ready at once).
    stub.SubmitProof(builtin(seed=80, delay_ms=400, priority=pb.LOW, rid=low[0]),
                     timeout=CALL_TIMEOUT)
    deadline = time.time() + 60
    while sum(q.in_progress for q in
              stub.GetStatus(pb.GetStatusRequest(), timeout=CALL_TIMEOUT).queues) < 1:
        assert time.time() < deadline, "the first LOW job never started"
        time.sleep(0.01)
    for i, rid in enumerate(low[1:], start=1):
        stub.SubmitProof(builtin(seed=80 + i, delay_ms=400, priority=pb.LOW, rid=rid),
                         timeout=CALL_TIMEOUT)
    time.sleep(0.2)
    st = stub.GetStatus(pb.GetStatusRequest(), timeout=CALL_TIMEOUT)
    started = sum(q.in_progress for q in st.queues)
    crit = stub.SubmitProof(builtin(seed=90, delay_ms=400, priority=pb.CRITICAL, rid="p-crit"),
                            timeout=CALL_TIMEOUT)
    assert crit.queue_position == 6, f"six LOW jobs were ahead when it came: {crit.queue_position}"
    done = await_all(stub, low + ["p-crit"])
    order = sorted(done, key=lambda i: done[i][0])
    # Only LOW jobs already granted when CRITICAL came may finish before it.
    rank = order.index("p-crit")
    assert rank <= max(started, 1), f"CRITICAL finished {rank + 1}th ({started} LOW had started): {order}"
    assert [i for i in order if i != "p-crit"] == low, f"LOW jobs out of FIFO order: {order}"
    proofs = []
    for i, rid in enumerate(low):
        proofs.append({"job": rid, "circuit": "synthetic", "constraints": 1024, "seed": 80 + i,
                       "partitions": 1, "proof": completed(done[rid][1], rid)})
    proofs.append({"job": "p-crit", "circuit": "synthetic", "constraints": 1024, "seed": 90,
                   "partitions": 1, "proof": completed(done["p-crit"][1], "critical")})
    out["order"] = order
    out["proofs"] = proofs


def scenario_cancel(stub, args, out):
    """Cancel a running and a queued job: was_running exact, ledger back to zero, next proves."""
    run = stub.SubmitProof(builtin(seed=101, partitions=2, delay_ms=2500, rid="c-run"),
                           timeout=CALL_TIMEOUT)
    queued = stub.SubmitProof(builtin(seed=102, delay_ms=300, rid="c-queued"), timeout=CALL_TIMEOUT)
    until_running(stub)
    c = stub.CancelProof(pb.CancelProofRequest(job_id=queued.job_id), timeout=CALL_TIMEOUT)
    assert not c.was_running, "a queued job said it was running"
    c = stub.CancelProof(pb.CancelProofRequest(job_id=run.job_id), timeout=CALL_TIMEOUT)
    assert c.was_running, "a running job said it was not running"
    for j in (run.job_id, queued.job_id):
        r = stub.AwaitProof(pb.AwaitProofRequest(job_id=j), timeout=CALL_TIMEOUT)
        assert r.status == pb.AwaitProofResponse.CANCELLED, (j, r.status, r.error_message)
        assert not r.proof
    expect_error(grpc.StatusCode.NOT_FOUND, stub.CancelProof, pb.CancelProofRequest(job_id=run.job_id))
    st = ledger_settles(stub)
    assert not [q for q in st.queues if q.pending or q.in_progress], st.queues
    nxt = stub.Prove(pb.ProveRequest(submit=builtin(seed=103, rid="c-next")), timeout=CALL_TIMEOUT)
    out["proofs"] = [{"job": "c-next", "circuit": "synthetic", "constraints": 1024, "seed": 103,
                      "partitions": 1, "proof": completed(nxt.result, "after the cancels")}]
    ledger_settles(stub)
    text = stub.GetMetrics(pb.GetMetricsRequest(), timeout=CALL_TIMEOUT).prometheus_text
    abandoned = [l for l in text.splitlines() if l.startswith('baton_proofs_total{result="abandoned"}')]
    assert abandoned and float(abandoned[0].rsplit(" ", 1)[1]) >= 1, abandoned


def fil_inputs(args):
    """The sealed sector the Rust side made: its C1 envelope, miner, sector and PoSt inputs."""
    with open(args.fil) as f:
        fil = json.load(f)
    with open(fil["c1"], "rb") as f:
        fil["envelope"] = f.read()
    return fil


def porep(fil, vanilla=None, miner=None, rid="", registered_proof=None, sector_size=2048):
    """A POREP_SEAL_COMMIT request filled as Curio fills it (lib/ffi/cuzk_funcs.go)."""
    return pb.SubmitProofRequest(
        request_id=rid, proof_kind=pb.POREP_SEAL_COMMIT, sector_size=sector_size,
        registered_proof=fil["seal_proof"] if registered_proof is None else registered_proof,
        priority=pb.NORMAL, vanilla_proof=fil["envelope"] if vanilla is None else vanilla,
        sector_number=fil["sector_id"], miner_id=fil["miner_id"] if miner is None else miner)


def winning(fil, vanilla=None, rid=""):
    """A WINNING_POST request filled as Curio fills it."""
    w = fil["winning"]
    return pb.SubmitProofRequest(
        request_id=rid, proof_kind=pb.WINNING_POST, sector_size=2048,
        registered_proof=w["proof"], priority=pb.CRITICAL,
        vanilla_proofs=[bytes.fromhex(w["vanilla"])] if vanilla is None else vanilla,
        miner_id=fil["miner_id"], randomness=bytes.fromhex(w["randomness"]))


def keys_of(stub):
    st = stub.GetStatus(pb.GetStatusRequest(), timeout=CALL_TIMEOUT)
    return {k.circuit_id: k for k in st.loaded_srs}


def window(fil, rid=""):
    """A WINDOW_POST_PARTITION request filled as Curio fills it."""
    w = fil["window"]
    return pb.SubmitProofRequest(
        request_id=rid, proof_kind=pb.WINDOW_POST_PARTITION, sector_size=2048,
        registered_proof=w["proof"], priority=pb.HIGH,
        vanilla_proofs=[bytes.fromhex(w["vanilla"])], miner_id=fil["miner_id"],
        randomness=bytes.fromhex(w["randomness"]), partition_index=0)


def snap(fil, rid=""):
    """A SNAP_DEALS_UPDATE request filled as Curio fills it (raw 32-byte commitments)."""
    u = fil["snap"]
    return pb.SubmitProofRequest(
        request_id=rid, proof_kind=pb.SNAP_DEALS_UPDATE, sector_size=2048,
        registered_proof=u["proof"], priority=pb.NORMAL,
        vanilla_proofs=[bytes.fromhex(v) for v in u["vanilla"]], sector_number=fil["sector_id"],
        miner_id=fil["miner_id"], comm_r_old=bytes.fromhex(u["comm_r_old"]),
        comm_r_new=bytes.fromhex(u["comm_r_new"]), comm_d_new=bytes.fromhex(u["comm_d_new"]))


def scenario_filecoin_before(stub, args, out):
    """The key preloaded; the PoRep job accepted and running, its key in use; bad Filecoin input
    refused with its status and cause meanwhile; then the test SIGKILLs the daemon."""
    fil = fil_inputs(args)
    env = fil["envelope"]
    # Preload: loaded once, listed with its size, no users.
    pre = stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id="porep-2k"), timeout=CALL_TIMEOUT)
    assert not pre.already_loaded and pre.load_time_ms > 0, pre
    assert stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id="porep-2k"),
                           timeout=CALL_TIMEOUT).already_loaded
    k = keys_of(stub)["porep-2k"]
    assert k.size_bytes > (500 << 20) and k.ref_count == 0, k
    # The job: running, its key in use and not evictable.
    sub = stub.SubmitProof(porep(fil, rid="fil-porep"), timeout=CALL_TIMEOUT)
    assert sub.job_id.startswith("fil-porep#"), sub
    until_running(stub, seconds=300)
    k = keys_of(stub)["porep-2k"]
    assert k.ref_count >= 1, k
    expect_error(grpc.StatusCode.FAILED_PRECONDITION, stub.EvictSRS,
                 pb.EvictSrsRequest(circuit_id="porep-2k"), needle="in use")
    # Bad input while it runs.
    expect_error(grpc.StatusCode.INVALID_ARGUMENT, stub.SubmitProof,
                 porep(fil, vanilla=env[: len(env) // 2]), needle="truncated")
    expect_error(grpc.StatusCode.INVALID_ARGUMENT, stub.SubmitProof,
                 porep(fil, miner=fil["miner_id"] + 1), needle="wrong miner")
    expect_error(grpc.StatusCode.INVALID_ARGUMENT, stub.SubmitProof,
                 porep(fil, registered_proof=8), needle="registered_proof 8")
    expect_error(grpc.StatusCode.INVALID_ARGUMENT, stub.SubmitProof,
                 porep(fil, vanilla=b""), needle="vanilla_proof is empty")
    # The same C1 output said to be of a 512 MiB sector, whose parameters are not in the cache.
    doc = json.loads(env)
    inner = base64.b64decode(doc["Phase1Out"]).decode()
    doc["Phase1Out"] = base64.b64encode(
        inner.replace("StackedDrg2KiBV1_1", "StackedDrg512MiBV1_1", 1).encode()).decode()
    doc["SectorSize"] = 512 << 20
    msg = expect_error(grpc.StatusCode.FAILED_PRECONDITION, stub.SubmitProof,
                       porep(fil, vanilla=json.dumps(doc).encode(), registered_proof=7,
                             sector_size=512 << 20), needle="no Groth16 parameters for porep-512m")
    assert ".params" in msg and "POREP_SEAL_COMMIT" in msg, msg
    # A proof type not built: non-interactive PoRep (an aggregated proof).
    doc = json.loads(env)
    doc["Phase1Out"] = base64.b64encode(inner.replace(
        "StackedDrg2KiBV1_1", "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep", 1).encode()).decode()
    expect_error(grpc.StatusCode.UNIMPLEMENTED, stub.SubmitProof,
                 porep(fil, vanilla=json.dumps(doc).encode(), registered_proof=0),
                 needle="POREP_SEAL_COMMIT")
    expect_error(grpc.StatusCode.INVALID_ARGUMENT, stub.SubmitProof,
                 winning(fil, vanilla=[]), needle="vanilla_proofs is empty")
    expect_error(grpc.StatusCode.FAILED_PRECONDITION, stub.PreloadSRS,
                 pb.PreloadSrsRequest(circuit_id="snap-512m"), needle="snap-512m")
    # Accepted (its bytes are decoded on the runner), then failed naming the bad vanilla proof.
    bad = stub.Prove(pb.ProveRequest(submit=winning(fil, vanilla=[b"\x01\x02\x03"])),
                     timeout=CALL_TIMEOUT).result
    assert bad.status == pb.AwaitProofResponse.FAILED, bad
    assert "vanilla proof 0" in bad.error_message and "WINNING_POST" in bad.error_message, bad
    # The PoRep job went on.
    st = stub.GetStatus(pb.GetStatusRequest(), timeout=CALL_TIMEOUT)
    q = {x.proof_kind: x for x in st.queues}
    assert q["POREP_SEAL_COMMIT"].in_progress == 1, st.queues


def scenario_filecoin_after(stub, args, out):
    """After the restart the journaled PoRep job finishes; WinningPoSt, one WindowPoSt partition
    and SnapDeals prove; the PoRep key, now unused, is evicted."""
    fil = fil_inputs(args)
    res = stub.AwaitProof(pb.AwaitProofRequest(job_id="fil-porep"), timeout=CALL_TIMEOUT)
    proof = completed(res, "PoRep C2 after the restart")
    assert len(res.proof) == 192, len(res.proof)
    again = stub.SubmitProof(porep(fil, rid="fil-porep"), timeout=CALL_TIMEOUT)
    assert again.job_id == res.job_id, (again.job_id, res.job_id)
    res2 = stub.AwaitProof(pb.AwaitProofRequest(job_id="fil-porep"), timeout=CALL_TIMEOUT)
    assert res2.proof == res.proof, "answered twice with different bytes"
    out["porep"] = proof
    for name, req in (("winning", winning), ("window", window), ("snap", snap)):
        r = stub.Prove(pb.ProveRequest(submit=req(fil, rid=f"fil-{name}")),
                       timeout=CALL_TIMEOUT).result
        out[name] = completed(r, name)
    keys = keys_of(stub)
    assert {"winning-2k", "wpost-2k", "snap-2k"} <= set(keys), keys
    # The PoRep key, loaded by the resumed job and kept in the key store, is still counted as
    # resident in the ledger; evicting it gives its bytes back, and those of the circuit's
    # recording the pin keeps beside it (issue 14: ~117 MiB for the 2 KiB PoRep circuit).
    st = stub.GetStatus(pb.GetStatusRequest(), timeout=CALL_TIMEOUT)
    k = {x.circuit_id: x for x in st.loaded_srs}["porep-2k"]
    assert k.ref_count == 0 and st.ledger_resident_bytes >= k.size_bytes, (k, st)
    ev = stub.EvictSRS(pb.EvictSrsRequest(circuit_id="porep-2k"), timeout=CALL_TIMEOUT)
    assert ev.was_loaded and ev.freed_bytes > (500 << 20), ev
    st2 = stub.GetStatus(pb.GetStatusRequest(), timeout=CALL_TIMEOUT)
    drop = st.ledger_resident_bytes - st2.ledger_resident_bytes
    assert k.size_bytes <= drop <= k.size_bytes + (256 << 20), (drop, st, st2)
    assert "porep-2k" not in {x.circuit_id for x in st2.loaded_srs}
    assert not stub.EvictSRS(pb.EvictSrsRequest(circuit_id="porep-2k"),
                             timeout=CALL_TIMEOUT).was_loaded
    ledger_settles(stub)


def refusals(http, reason):
    """baton_server_refusals_total{endpoint="grpc",reason=...} from /metrics (0 when absent)."""
    code, body = http_get(http, "/metrics")
    assert code == 200
    sample = f'baton_server_refusals_total{{endpoint="grpc",reason="{reason}"}} '
    lines = [l for l in body.splitlines() if l.startswith(sample)]
    return float(lines[0].rsplit(" ", 1)[1]) if lines else 0.0


def scenario_allow_clients(stub, args, out):
    """0.0.0.0, a token, and a client range that holds 127.0.0.1: admitted without the token."""
    st = stub.GetStatus(pb.GetStatusRequest(), timeout=CALL_TIMEOUT)
    assert st.ledger_budget_bytes > 0
    pr = stub.Prove(pb.ProveRequest(submit=builtin(seed=111)), timeout=CALL_TIMEOUT)
    out["proofs"] = [{"job": pr.result.job_id, "circuit": "synthetic", "constraints": 1024,
                      "seed": 111, "partitions": 1, "proof": completed(pr.result, "from the range")}]
    assert refusals(args.http, "no_token") == 0


def scenario_allow_clients_token(stub, args, out):
    """0.0.0.0, a token, and a client range without 127.0.0.1: refused without the token
    (UNAUTHENTICATED, saying what would admit it, counted in /metrics), admitted with it."""
    before = refusals(args.http, "no_token")
    why = expect_error(grpc.StatusCode.UNAUTHENTICATED, stub.GetStatus, pb.GetStatusRequest(),
                       needle="bearer token")
    assert "server.allow_clients" in why and "10.0.0.0/8" in why and "127.0.0.1" in why, why
    assert refusals(args.http, "no_token") == before + 1
    expect_error(grpc.StatusCode.UNAUTHENTICATED, stub.SubmitProof, builtin(seed=3),
                 metadata=[("authorization", "Bearer wrong")], needle="wrong")
    assert refusals(args.http, "wrong_token") >= 1
    good = [("authorization", "Bearer " + args.token)]
    pr = stub.Prove(pb.ProveRequest(submit=builtin(seed=112)), timeout=CALL_TIMEOUT, metadata=good)
    out["proofs"] = [{"job": pr.result.job_id, "circuit": "synthetic", "constraints": 1024,
                      "seed": 112, "partitions": 1, "proof": completed(pr.result, "with the token")}]
    # The HTTP port admits this machine without the token.
    assert http_get(args.http, "/healthz") == (200, "ok\n")


def status_doc(http):
    """GET /status: cuzk's JSON, readable from any page."""
    with urllib.request.urlopen(f"http://{http}/status", timeout=10) as r:
        assert r.status == 200
        assert r.headers["Access-Control-Allow-Origin"] == "*", dict(r.headers)
        assert r.headers["Content-Type"].startswith("application/json"), dict(r.headers)
        return json.load(r)


def scenario_cuzk_status(stub, args, out):
    """Started from a cuzk config, on its Unix socket: /status shows the running job and its
    partitions under cuzk's field names; the job proves over the socket."""
    assert args.grpc.startswith("unix://"), args.grpc
    # grpcio sends the socket's path as :authority, which the HTTP/2 server refuses as malformed
    # (PROTOCOL_ERROR); Go's gRPC, Curio's, sends "localhost" over a Unix socket, as here.
    stub = pbg.ProvingEngineStub(grpc.insecure_channel(args.grpc, options=[
        ("grpc.default_authority", "localhost"),
        ("grpc.max_receive_message_length", 512 << 20),
    ]))
    sub = stub.SubmitProof(builtin(seed=121, partitions=2, delay_ms=1500, rid="st-job"),
                           timeout=CALL_TIMEOUT)
    deadline = time.time() + 120
    while True:
        doc = status_doc(args.http)
        job = {p["job_id"]: p for p in doc["pipelines"]}.get(sub.job_id)
        if job and job["total_partitions"] == 2 and \
                any(x["state"] != "pending" for x in job["partitions"]):
            break
        assert time.time() < deadline, doc
        time.sleep(0.05)
    top = {"uptime_secs", "memory", "synthesis", "pipelines", "gpu_workers", "allocations",
           "counters", "ledger"}
    assert top <= set(doc), sorted(doc)
    assert set(doc["memory"]) == {"total_bytes", "used_bytes", "available_bytes"}, doc["memory"]
    assert doc["memory"]["total_bytes"] == 2 << 30, "the cuzk file's total_budget"
    assert doc["synthesis"]["max_concurrent"] == 1, "the cuzk file's max_parallel_synthesis"
    assert {"max_concurrent", "active"} <= set(doc["synthesis"])
    assert {"job_id", "proof_kind", "started_secs_ago", "total_partitions", "partitions_done",
            "partitions"} <= set(job), job
    assert job["proof_kind"] == "baton-synthetic", job
    cuzk_states = {"pending", "synthesizing", "synth_done", "gpu", "done", "failed"}
    for i, p in enumerate(job["partitions"]):
        assert {"index", "state", "synth_ms", "gpu_ms"} <= set(p) and p["index"] == i, p
        assert p["state"] in cuzk_states, p
        if p["state"] in {"synth_done", "gpu", "done"}:
            assert isinstance(p["synth_ms"], int), ("synthesized, so its time is known", p)
    workers = doc["gpu_workers"]
    assert workers and {"worker_id", "gpu_ordinal", "state", "current_job", "current_partition",
                        "busy_secs"} <= set(workers[0]), workers
    assert {w["state"] for w in workers} <= {"idle", "proving"}, workers
    srs = {k["circuit_id"]: k for k in doc["allocations"]["srs"]}
    key = srs.get("baton-synthetic-1024")
    assert key and key["bytes"] > 0 and not key["evictable"], srs
    assert {"circuit_id", "bytes", "last_used_secs_ago", "evictable"} <= set(key)
    assert isinstance(key["last_used_secs_ago"], (int, float)) and key["last_used_secs_ago"] >= 0, key
    assert doc["allocations"]["pce"] == []
    assert {"total_completed", "total_failed", "completed_by_kind", "failed_by_kind",
            "queue_depth"} <= set(doc["counters"]), doc["counters"]
    assert doc["ledger"]["budget_bytes"] == 2 << 30, doc["ledger"]
    res = stub.AwaitProof(pb.AwaitProofRequest(job_id=sub.job_id), timeout=CALL_TIMEOUT)
    out["proofs"] = [{"job": sub.job_id, "circuit": "synthetic", "constraints": 1024, "seed": 121,
                      "partitions": 2, "proof": completed(res, "over the unix socket")}]
    doc = status_doc(args.http)
    assert sub.job_id not in {p["job_id"] for p in doc["pipelines"]}, doc["pipelines"]
    assert doc["counters"]["total_completed"] >= 1, doc["counters"]
    try:
        http_get(args.http, "/nope")
        raise AssertionError("/nope answered")
    except urllib.error.HTTPError as e:
        assert e.code == 404


SCENARIOS = {
    "basic": scenario_basic,
    "bad_input": scenario_bad_input,
    "slow_http": scenario_slow_http,
    "auth": scenario_auth,
    "tls": scenario_tls,
    "restart_before": scenario_restart_before,
    "restart_after": scenario_restart_after,
    "drain": scenario_drain,
    "priority": scenario_priority,
    "cancel": scenario_cancel,
    "filecoin_before": scenario_filecoin_before,
    "filecoin_after": scenario_filecoin_after,
    "curio": scenario_curio,
    "allow_clients": scenario_allow_clients,
    "allow_clients_token": scenario_allow_clients_token,
    "cuzk_status": scenario_cuzk_status,
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=sorted(SCENARIOS))
    p.add_argument("--grpc", required=True)
    p.add_argument("--http", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--token", default="")
    p.add_argument("--ca", default="")
    p.add_argument("--prev", default="")
    p.add_argument("--pid", default="")
    p.add_argument("--fil", default="")
    p.add_argument("--curio-proto", action="store_true",
                   help="stubs from Curio's own definitions (tests/python/curio)")
    args = p.parse_args()
    ch = channel(args.grpc)
    stub = pbg.ProvingEngineStub(ch)
    out = {}
    SCENARIOS[args.scenario](stub, args, out)
    with open(args.out, "w") as f:
        json.dump(out, f)
    print(f"scenario {args.scenario}: ok")


if __name__ == "__main__":
    main()
