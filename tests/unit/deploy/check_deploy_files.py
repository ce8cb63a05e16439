#!/usr/bin/env python3
"""Checks the deployment files in deploy/ against each other and against gemmprofd.

Reads deploy/gemmprofd.service, deploy/gemmprof.sysusers.conf,
deploy/container/Containerfile and deploy/k8s/gemmprofd-daemonset.yaml, and checks:
every --flag each passes to gemmprofd is one that `gemmprofd --help` lists; the unit's
sandbox (and that it leaves CUDA working); the image's base and user; the DaemonSet's
GPU request, secret mounts, security context and probes. When systemd-analyze exists,
the unit also goes through `systemd-analyze verify`.

Usage: check_deploy_files.py --deploy-dir DIR (--gemmprofd BINARY | --help-text FILE)
Exit status 0 when every check passes, 1 otherwise. Needs Python 3 and PyYAML
(Debian: python3-yaml).
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import yaml

DAEMON = "/opt/gemmprof/bin/gemmprofd"
SECRET_DIR = "/etc/gemmprof/"
STATE_DIR = "/var/lib/gemmprof/"
# Flags whose value is a file the deployment must provide from its secrets.
SECRET_FLAGS = ("tls-cert", "tls-key", "tls-client-ca", "tokens")


def read(path):
    with open(path) as f:
        return f.read()


class Report:
    """Collects failures; prints one line per check."""

    def __init__(self):
        self.failures = []

    def check(self, ok, what):
        print(("ok:   " if ok else "FAIL: ") + what)
        if not ok:
            self.failures.append(what)
        return ok


def parse_help_flags(text):
    """Long option names from CLI11 help output: lines that define an option."""
    flags = set()
    for line in text.splitlines():
        m = re.match(r"^\s+(?:-\w,\s*)?--([a-z][a-z0-9-]*)", line)
        if m:
            flags.add(m.group(1))
    return flags


def flags_of(tokens):
    """(name, value or None) of every --flag in a command line's tokens."""
    out = []
    for i, tok in enumerate(tokens):
        if not tok.startswith("--"):
            continue
        name, eq, value = tok[2:].partition("=")
        if not eq:
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            value = nxt if nxt is not None and not nxt.startswith("-") else None
        out.append((name, value))
    return out


def check_flags(report, where, tokens, known):
    flags = flags_of(tokens)
    report.check(bool(flags), f"{where}: passes flags to gemmprofd")
    for name, _ in flags:
        report.check(name in known, f"{where}: --{name} is a gemmprofd flag")
    return dict(flags)


def check_paths(report, where, flags):
    """Secrets come from /etc/gemmprof, the database from /var/lib/gemmprof."""
    for name in SECRET_FLAGS:
        if name in flags:
            report.check((flags[name] or "").startswith(SECRET_DIR),
                         f"{where}: --{name} {flags[name]} is under {SECRET_DIR}")
    report.check((flags.get("db") or "").startswith(STATE_DIR),
                 f"{where}: --db {flags.get('db')} is under {STATE_DIR}")
    report.check("tls-cert" in flags and "tls-key" in flags and "tokens" in flags,
                 f"{where}: serves TLS with tokens (--tls-cert, --tls-key, --tokens)")
    report.check("insecure" not in flags, f"{where}: does not pass --insecure")


# ---------------------------------------------------------------- systemd unit


def parse_unit(text):
    """{section: {key: [values]}} of a systemd unit file (continuations joined)."""
    sections, current, pending = {}, None, ""
    for raw in text.splitlines():
        line = pending + raw.strip() if pending else raw.strip()
        pending = ""
        if not line or line[0] in "#;":
            continue
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        key, _, value = line.partition("=")
        if current is not None:
            current.setdefault(key.strip(), []).append(value.strip())
    return sections


# Settings the sandbox needs, with the value each must have.
REQUIRED_SERVICE = {
    "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
    "PrivateTmp": "yes", "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes",
    "ProtectKernelLogs": "yes", "ProtectControlGroups": "yes", "RestrictNamespaces": "yes",
    "LockPersonality": "yes", "RestrictRealtime": "yes", "SystemCallArchitectures": "native",
    "CapabilityBoundingSet": "", "DevicePolicy": "closed",
    "ExecReload": "/bin/kill -HUP $MAINPID", "StateDirectory": "gemmprof",
}
# Settings that would break CUDA (JIT, device nodes, /proc/driver/nvidia) if set so.
FORBIDDEN_SERVICE = {
    "MemoryDenyWriteExecute": "yes", "PrivateDevices": "yes", "ProcSubset": "pid",
}
# The daemon re-executes itself for each GPU worker.
PROCESS_SYSCALLS = {"@process", "execve", "fork", "vfork", "clone", "clone3"}


def last(service, key):
    values = service.get(key)
    return values[-1] if values else None


def check_unit_sandbox(report, service):
    for key, want in REQUIRED_SERVICE.items():
        report.check(last(service, key) == want, f"unit: {key}={want} (is {last(service, key)!r})")
    for key, bad in FORBIDDEN_SERVICE.items():
        report.check(last(service, key) != bad, f"unit: {key} is not {bad}")
    families = " ".join(service.get("RestrictAddressFamilies", [])).split()
    report.check(bool(families) and not any(f.startswith("~") for f in families)
                 and {"AF_UNIX", "AF_INET", "AF_INET6"} <= set(families),
                 f"unit: RestrictAddressFamilies allows AF_UNIX AF_INET AF_INET6 only ({families})")
    allowed = {v.split()[0]: v.split()[1:] for v in service.get("DeviceAllow", []) if v}
    for dev in ("char-nvidia", "char-nvidiactl", "char-nvidia-uvm"):
        report.check("rw" in "".join(allowed.get(dev, [])), f"unit: DeviceAllow={dev} rw")
    for value in service.get("SystemCallFilter", []):
        words = value.split()
        denied = words[0].startswith("~") if words else False
        names = {w.lstrip("~") for w in words}
        ok = not (names & PROCESS_SYSCALLS) if denied else (
            "@process" in names or "@system-service" in names)
        report.check(ok, f"unit: SystemCallFilter={value} leaves fork/exec allowed")


def check_unit(report, deploy_dir, known):
    path = os.path.join(deploy_dir, "gemmprofd.service")
    units = parse_unit(read(path))
    service = units.get("Service", {})
    report.check("Install" in units and "Unit" in units, "unit: has [Unit] and [Install]")
    start = shlex.split(last(service, "ExecStart") or "")
    report.check(bool(start) and start[0].lstrip("-@:+!") == DAEMON,
                 f"unit: ExecStart runs {DAEMON}")
    flags = check_flags(report, "unit ExecStart", start[1:], known)
    check_paths(report, "unit ExecStart", flags)
    check_unit_sandbox(report, service)
    user = last(service, "User")
    sysusers = os.path.join(deploy_dir, "gemmprof.sysusers.conf")
    declared = set()
    if os.path.exists(sysusers):
        for line in read(sysusers).splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] == "u":
                declared.add(words[1])
    report.check(last(service, "DynamicUser") == "yes" or (user not in (None, "root", "0")
                                                           and user in declared),
                 f"unit: runs as a dedicated user ({user!r}, declared in gemmprof.sysusers.conf)")
    return path


def systemd_verify(report, unit_path, daemon_binary):
    """systemd-analyze verify on a copy whose ExecStart names a binary that exists here."""
    tool = shutil.which("systemd-analyze")
    if not tool:
        print("skip: systemd-analyze verify (systemd-analyze not installed)")
        return
    binary = os.path.abspath(daemon_binary) if daemon_binary else "/bin/true"
    text = read(unit_path).replace(DAEMON, binary)
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "gemmprofd.service")
        with open(copy, "w") as f:
            f.write(text)
        run = subprocess.run([tool, "verify", copy], capture_output=True, text=True)
    # verify exits 0 on unknown keys and bad values, printing them: any output fails.
    out = (run.stdout + run.stderr).strip()
    report.check(run.returncode == 0 and not out,
                 "unit: systemd-analyze verify is clean" + (f":\n{out}" if out else ""))


# ---------------------------------------------------------------- Containerfile


def parse_containerfile(text):
    """[(INSTRUCTION, arguments)] with comments dropped and continuations joined."""
    out, pending = [], ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and not pending):
            continue
        line = pending + stripped
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def exec_form(args):
    """The JSON array of an exec-form instruction, or None for the shell form."""
    try:
        value = json.loads(args)
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def check_containerfile(report, deploy_dir, known):
    path = os.path.join(deploy_dir, "container", "Containerfile")
    steps = parse_containerfile(read(path))
    get = lambda name: [args for word, args in steps if word == name]
    base = (get("FROM") or [""])[-1].split()[0] if get("FROM") else ""
    report.check(re.fullmatch(r"nvidia/cuda:13\.0\.\d+-runtime-ubuntu24\.04", base) is not None,
                 f"Containerfile: FROM a CUDA 13.0 runtime image (with cuBLASLt): {base}")
    user = (get("USER") or ["root"])[-1].split(":")[0]
    report.check(user not in ("root", "0"), f"Containerfile: runs as a non-root user ({user})")
    entry = exec_form((get("ENTRYPOINT") or ["null"])[-1]) or []
    report.check(entry[:1] == [DAEMON], f"Containerfile: ENTRYPOINT [\"{DAEMON}\"] (exec form)")
    cmd = exec_form((get("CMD") or ["[]"])[-1])
    report.check(cmd is not None, "Containerfile: CMD in exec form")
    flags = check_flags(report, "Containerfile ENTRYPOINT+CMD", entry[1:] + (cmd or []), known)
    check_paths(report, "Containerfile ENTRYPOINT+CMD", flags)
    for args in get("RUN"):
        run = exec_form(args) or shlex.split(args)
        if run and run[0] == DAEMON:
            check_flags(report, "Containerfile RUN", run[1:], known)
    port = (flags.get("listen") or "").rpartition(":")[2]
    report.check(port in " ".join(get("EXPOSE")).split(), f"Containerfile: EXPOSE {port}")
    copied = " ".join(get("COPY"))
    report.check("bundle/bin/gemmprofd" in copied and "bundle/lib/" in copied,
                 "Containerfile: copies the bundle's bin/gemmprofd and lib/")


# ---------------------------------------------------------------- DaemonSet


def secret_files(volume):
    """{path inside the mount: secret name} that a secret or projected volume provides."""
    sources = []
    if "secret" in volume:
        sources = [volume["secret"]]
    elif "projected" in volume:
        sources = [s["secret"] for s in volume["projected"].get("sources", []) if "secret" in s]
    files = {}
    for src in sources:
        for item in src.get("items", []):
            files[item["path"]] = src.get("secretName", src.get("name"))
    return files


def daemon_container(spec):
    for c in spec.get("containers", []):
        if any(str(a).startswith("--listen") for a in c.get("args", []) + c.get("command", [])):
            return c
    return None


def check_pod_security(report, pod, c):
    ctx, pod_ctx = c.get("securityContext", {}), pod.get("securityContext", {})
    report.check(ctx.get("runAsNonRoot", pod_ctx.get("runAsNonRoot")) is True,
                 "DaemonSet: runAsNonRoot")
    report.check(ctx.get("readOnlyRootFilesystem") is True, "DaemonSet: readOnlyRootFilesystem")
    report.check(ctx.get("allowPrivilegeEscalation") is False,
                 "DaemonSet: allowPrivilegeEscalation false")
    report.check("ALL" in ctx.get("capabilities", {}).get("drop", []),
                 "DaemonSet: drops ALL capabilities")


def check_probes(report, c, port, tls):
    names = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
    for kind in ("livenessProbe", "readinessProbe"):
        probe = c.get(kind) or {}
        target = (probe.get("tcpSocket") or {}).get("port")
        target = names.get(target, target)
        # kubelet's grpc probe is plaintext and httpGet would need a token: with TLS on,
        # only tcpSocket (or exec) can pass.
        ok = str(target) == port if "tcpSocket" in probe else ("exec" in probe or not tls)
        report.check(bool(probe) and ok, f"DaemonSet: {kind} works with TLS on port {port}")


def check_daemonset(report, deploy_dir, known):
    path = os.path.join(deploy_dir, "k8s", "gemmprofd-daemonset.yaml")
    try:
        docs = [d for d in yaml.safe_load_all(read(path)) if d]
    except yaml.YAMLError as e:
        report.check(False, f"DaemonSet: {path} is valid YAML ({e})")
        return
    ds = next((d for d in docs if d.get("kind") == "DaemonSet"), None)
    if not report.check(ds is not None and ds.get("apiVersion") == "apps/v1",
                        "DaemonSet: a kind DaemonSet, apiVersion apps/v1"):
        return
    pod = ds.get("spec", {}).get("template", {}).get("spec", {})
    c = daemon_container(pod)
    if not report.check(c is not None, "DaemonSet: a container runs gemmprofd --listen"):
        return
    gpus = c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu")
    report.check(isinstance(gpus, int) and gpus >= 1, f"DaemonSet: limits nvidia.com/gpu ({gpus})")
    flags = check_flags(report, "DaemonSet args", c.get("command", [])[1:] + c.get("args", []),
                        known)
    check_paths(report, "DaemonSet args", flags)
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    provided = {}
    for m in c.get("volumeMounts", []):
        files = secret_files(volumes.get(m["name"], {}))
        if files:
            report.check(m.get("readOnly") is True, f"DaemonSet: secret mount {m['name']} readOnly")
        for rel, secret in files.items():
            provided[os.path.join(m["mountPath"], rel)] = secret
    for name in SECRET_FLAGS:
        if name in flags:
            report.check(flags[name] in provided,
                         f"DaemonSet: --{name} {flags[name]} is a file of a mounted secret")
    tls_keys = {p for p in provided if p.endswith(("/tls.crt", "/tls.key", "/ca.crt"))}
    report.check(len(tls_keys) == 3, "DaemonSet: the TLS secret's tls.crt, tls.key, ca.crt mounted")
    db_dir = os.path.dirname(flags.get("db") or "")
    report.check(any(m["mountPath"] == db_dir and not m.get("readOnly") and
                     ("hostPath" in volumes.get(m["name"], {}) or
                      "persistentVolumeClaim" in volumes.get(m["name"], {}))
                     for m in c.get("volumeMounts", [])),
                 f"DaemonSet: --db folder {db_dir} is a writable hostPath or PVC")
    check_pod_security(report, pod, c)
    check_probes(report, c, (flags.get("listen") or "").rpartition(":")[2], "tls-cert" in flags)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deploy-dir", required=True)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--gemmprofd", help="the built gemmprofd: its --help lists the flags")
    source.add_argument("--help-text", help="a file holding gemmprofd --help output instead")
    args = parser.parse_args(argv)
    if args.gemmprofd:
        run = subprocess.run([args.gemmprofd, "--help"], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL: {args.gemmprofd} --help exited {run.returncode}: {run.stderr}")
            return 1
        help_text = run.stdout
    else:
        help_text = read(args.help_text)
    known = parse_help_flags(help_text)
    report = Report()
    report.check(len(known) >= 3, f"gemmprofd --help lists its flags ({len(known)} found)")
    unit_path = check_unit(report, args.deploy_dir, known)
    systemd_verify(report, unit_path, args.gemmprofd)
    check_containerfile(report, args.deploy_dir, known)
    check_daemonset(report, args.deploy_dir, known)
    print(f"{len(report.failures)} of the checks failed" if report.failures else "all checks passed")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
