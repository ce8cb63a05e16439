#!/usr/bin/env python3
"""Tests of check_deploy_files.py: the real deploy/ files pass against a gemmprofd that
has every flag they use, and each kind of mistake in a copy of them is caught.

Usage: check_deploy_files_test.py DEPLOY_DIR
"""

import contextlib
import io
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_deploy_files  # noqa: E402

DEPLOY_DIR = None

# CLI11's layout, with the flags the TLS, token and limit work adds to gemmprofd.
HELP = """gemmprofd: the gemmprof daemon.
Usage: gemmprofd [OPTIONS]

Options:
  -h,--help                   Print this help message and exit
  --listen TEXT=127.0.0.1:50051
                              host:port to serve gRPC on (port 0: pick a free one)
  --db TEXT=gemmprof.db       SQLite database file (created if missing)
  --backend TEXT:{auto,cuda,host}=auto
  --log-level TEXT=info       trace|debug|info|warn|error|critical|off
  --log-file TEXT             write the log to this file instead of stderr
  --port-file TEXT            write the bound port here once serving
  --node TEXT                 this daemon's name
  --shutdown-grace FLOAT:FLOAT in [0 - 600]=5
  --tls-cert TEXT             server certificate chain (PEM)
  --tls-key TEXT              server private key (PEM)
  --tls-client-ca TEXT        CA that client certificates must chain to
  --insecure                  serve plaintext on a non-loopback address
  --tokens TEXT               bearer token file
  --max-queued-jobs UINT=64
  --max-items-per-job UINT=100000
  --max-watches-per-client UINT=8
  --item-timeout FLOAT=900


Examples:
  gemmprofd --listen 0.0.0.0:50051 --from-the-footer
"""


class CheckDeployFilesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.deploy = os.path.join(self.tmp, "deploy")
        shutil.copytree(DEPLOY_DIR, self.deploy)
        self.help = os.path.join(self.tmp, "help.txt")
        with open(self.help, "w") as f:
            f.write(HELP)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def edit(self, rel, old, new):
        path = os.path.join(self.deploy, rel)
        text = check_deploy_files.read(path)
        self.assertIn(old, text, f"{rel} no longer holds {old!r}: update this test")
        with open(path, "w") as f:
            f.write(text.replace(old, new, 1))

    def run_checks(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = check_deploy_files.main(["--deploy-dir", self.deploy, "--help-text", self.help])
        return rc, out.getvalue()

    def assert_fails(self, expected):
        rc, out = self.run_checks()
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL: " + expected, out)

    def test_real_files_pass_when_gemmprofd_has_their_flags(self):
        rc, out = self.run_checks()
        self.assertEqual(rc, 0, out)

    def test_help_parser_reads_option_lines_only(self):
        flags = check_deploy_files.parse_help_flags(HELP)
        self.assertIn("help", flags)
        self.assertIn("max-watches-per-client", flags)
        self.assertNotIn("from-the-footer", flags)

    def test_flag_missing_from_gemmprofd_fails_in_every_file(self):
        with open(self.help, "w") as f:
            f.write(HELP.replace("  --tokens TEXT", "  --token-file TEXT"))
        rc, out = self.run_checks()
        self.assertEqual(rc, 1)
        for where in ("unit ExecStart", "Containerfile ENTRYPOINT+CMD", "DaemonSet args"):
            self.assertIn(f"FAIL: {where}: --tokens is a gemmprofd flag", out)

    def test_unit_unknown_flag(self):
        self.edit("gemmprofd.service", "--shutdown-grace 30", "--shutdown-grace 30 --grace 5")
        self.assert_fails("unit ExecStart: --grace is a gemmprofd flag")

    def test_unit_memory_deny_write_execute_breaks_the_cuda_jit(self):
        self.edit("gemmprofd.service", "LockPersonality=yes",
                  "LockPersonality=yes\nMemoryDenyWriteExecute=yes")
        self.assert_fails("unit: MemoryDenyWriteExecute is not yes")

    def test_unit_address_family_deny_list(self):
        self.edit("gemmprofd.service", "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6",
                  "RestrictAddressFamilies=~AF_PACKET")
        self.assert_fails("unit: RestrictAddressFamilies allows")

    def test_unit_syscall_filter_forbidding_exec(self):
        self.edit("gemmprofd.service", "LockPersonality=yes",
                  "LockPersonality=yes\nSystemCallFilter=~@process")
        self.assert_fails("unit: SystemCallFilter=~@process leaves fork/exec allowed")

    def test_unit_without_uvm_device(self):
        self.edit("gemmprofd.service", "DeviceAllow=char-nvidia-uvm rw\n", "")
        self.assert_fails("unit: DeviceAllow=char-nvidia-uvm rw")

    def test_unit_user_not_declared(self):
        self.edit("gemmprofd.service", "User=gemmprof", "User=nobody")
        self.assert_fails("unit: runs as a dedicated user")

    def test_unit_reload_without_sighup(self):
        self.edit("gemmprofd.service", "ExecReload=/bin/kill -HUP $MAINPID",
                  "ExecReload=/bin/kill -USR1 $MAINPID")
        self.assert_fails("unit: ExecReload=/bin/kill -HUP $MAINPID")

    @unittest.skipUnless(shutil.which("systemd-analyze"), "systemd-analyze not installed")
    def test_unit_unknown_key_fails_systemd_verify(self):
        self.edit("gemmprofd.service", "LockPersonality=yes",
                  "LockPersonality=yes\nProtectKernelTunable=yes")
        self.assert_fails("unit: systemd-analyze verify is clean")

    def test_containerfile_base_flavour_lacks_cublas(self):
        self.edit("container/Containerfile", "13.0.2-runtime-ubuntu24.04",
                  "13.0.2-base-ubuntu24.04")
        self.assert_fails("Containerfile: FROM a CUDA 13.0 runtime image")

    def test_containerfile_root_user(self):
        self.edit("container/Containerfile", "USER 10001:10001", "USER root")
        self.assert_fails("Containerfile: runs as a non-root user")

    def test_containerfile_unknown_flag_in_cmd(self):
        self.edit("container/Containerfile", '"--backend", "cuda"', '"--gpu", "all"')
        self.assert_fails("Containerfile ENTRYPOINT+CMD: --gpu is a gemmprofd flag")

    def test_containerfile_insecure(self):
        self.edit("container/Containerfile", '"--backend", "cuda"', '"--insecure"')
        self.assert_fails("Containerfile ENTRYPOINT+CMD: does not pass --insecure")

    def test_daemonset_invalid_yaml(self):
        self.edit("k8s/gemmprofd-daemonset.yaml", "kind: DaemonSet", "kind: [DaemonSet")
        self.assert_fails("DaemonSet:")

    def test_daemonset_without_gpu(self):
        self.edit("k8s/gemmprofd-daemonset.yaml", "nvidia.com/gpu: 1", "cpu: 1")
        self.assert_fails("DaemonSet: limits nvidia.com/gpu")

    def test_daemonset_tokens_secret_not_mounted(self):
        self.edit("k8s/gemmprofd-daemonset.yaml", "name: gemmprofd-tokens", "name: other")
        self.edit("k8s/gemmprofd-daemonset.yaml", "path: tokens", "path: other")
        self.assert_fails("DaemonSet: --tokens /etc/gemmprof/tokens is a file of a mounted secret")

    def test_daemonset_secret_mount_writable(self):
        self.edit("k8s/gemmprofd-daemonset.yaml", "readOnly: true", "readOnly: false")
        self.assert_fails("DaemonSet: secret mount secrets readOnly")

    def test_daemonset_probe_that_cannot_speak_tls(self):
        self.edit("k8s/gemmprofd-daemonset.yaml",
                  "livenessProbe:\n            tcpSocket:\n              port: grpc",
                  "livenessProbe:\n            grpc:\n              port: 50051")
        self.assert_fails("DaemonSet: livenessProbe works with TLS on port 50051")

    def test_daemonset_root_filesystem_writable(self):
        self.edit("k8s/gemmprofd-daemonset.yaml",
                  "allowPrivilegeEscalation: false\n            readOnlyRootFilesystem: true\n"
                  "            capabilities:\n              drop: [\"ALL\"]\n          # TLS",
                  "allowPrivilegeEscalation: false\n            readOnlyRootFilesystem: false\n"
                  "            capabilities:\n              drop: [\"ALL\"]\n          # TLS")
        self.assert_fails("DaemonSet: readOnlyRootFilesystem")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: check_deploy_files_test.py DEPLOY_DIR")
    DEPLOY_DIR = sys.argv.pop(1)
    unittest.main(verbosity=2)
