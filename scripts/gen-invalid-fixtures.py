#!/usr/bin/env python3
"""Regenerates tests/fixtures/invalid: broken blueprints, each followed by
`# expect: code | path | line:col | message` lines that tests/it/invalid_blueprints.rs
checks. Semantic cases are variants of tests/fixtures/valid/gpu-base.yaml; the
expected line and column are computed here from the fixture's own text (the
line holding an anchor string), never from nodeimg's output."""
import os
import shutil
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, 'tests/fixtures/invalid')
BASE = '''apiVersion: nodeimg.dev/v1alpha1
kind: NodeBlueprint
metadata:
  name: gpu-base
  version: "1"
os:
  distro: ubuntu
  version: "22.04"
  patchLevel: "2026-11-15"
  kernel: 5.15.0-171-generic
  cgroup: v2
boot:
  iommu: passthrough
  kernelArgs:
    required: [pci=realloc=off]
    forbidden: [mitigations=off]
accelerators:
  vendor: nvidia
  model: H100 SXM
  count: 8
  pcie: {generation: 5, width: 16}
  interconnect:
    nvswitch: true
    fabricManager: {version: "580.105.08"}
  driver:
    version: "580.105.08"
    authority: preinstalled
  cuda: "13.0"
  containerToolkit: "1.18.1"
network:
  nics:
    - {role: compute, model: ConnectX-7, count: 8, speedGbps: 400, mtu: 4096, linkLayer: infiniband, rdma: true}
runtime:
  containerd:
    version: 2.1.4
    defaultRuntime: runc
  cdi:
    generator: nvidia-ctk
kubernetes:
  version: 1.34.2
  capacity: {cpu: 224, memory: 2Ti}
  kubelet:
    maxPods: 110
    kubeReserved: {policy: eks}
    systemReserved: {cpu: 500m, memory: 2Gi}
  deviceInjection: {mode: device-plugin}
system:
  cache: {path: /var/cache/models, highWatermark: 85%, lowWatermark: 70%}
'''
open(os.path.join(REPO, 'tests/fixtures/valid/gpu-base.yaml'), 'w').write(BASE)

def pos(text, anchor, col_anchor=None, nth=0):
    """1-based line of the nth line containing anchor; column of col_anchor (or first non-space)."""
    hits = [i for i, l in enumerate(text.split('\n')) if anchor in l]
    i = hits[nth]
    line = text.split('\n')[i]
    c = line.index(col_anchor) if col_anchor else len(line) - len(line.lstrip())
    return f"{i+1}:{c+1}"

cases = []
def case(name, text, expects):
    cases.append((name, text, expects))

def variant(name, subs, expects, base=BASE):
    t = base
    for a, b in subs:
        assert a in t, (name, a)
        t = t.replace(a, b, 1)
    exp = [(code, path, pos(t, *where) if where else None, msg) for code, path, where, msg in expects]
    case(name, t, exp)

# ---- reading and syntax ----
case('empty', '', [('syntax', '', '1:1', 'file is empty')])
case('comment-only', '# nothing here\n', [('syntax', '', '1:1', 'file is empty')])
case('nul-byte', 'apiVersion: nodeimg.dev/v1alpha1\nkind: Node\x00Blueprint\n', [('syntax', '', '2:11', 'NUL byte')])
case('unclosed-flow', 'apiVersion: nodeimg.dev/v1alpha1\nkind: NodeBlueprint\nmetadata: {name: x, version: "1"\nos: {}\n', [('syntax', '', None, 'YAML syntax error')])
case('bad-indentation', 'apiVersion: nodeimg.dev/v1alpha1\nkind: NodeBlueprint\nmetadata:\n  name: x\n version: "1"\n', [('syntax', '', None, 'YAML syntax error')])
case('tab-indentation', 'apiVersion: nodeimg.dev/v1alpha1\nmetadata:\n\tname: x\n', [('syntax', '', None, 'YAML syntax error')])
case('duplicate-key', 'apiVersion: nodeimg.dev/v1alpha1\nkind: NodeBlueprint\nkind: NodeBlueprint\n', [('syntax', 'kind', '3:1', 'duplicate key `kind` (first at line 2)')])
case('two-documents', 'apiVersion: nodeimg.dev/v1alpha1\n---\nkind: NodeBlueprint\n', [('syntax', '', '2:1', 'found a second one')])
bomb = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n' + ''.join(
    f'a{i}: &a{i} [' + ', '.join([f'*a{i-1}'] * 10) + ']\n' for i in range(1, 10))
case('alias-bomb', bomb, [('syntax', None, None, 'more than 100000 nodes')])
case('deep-nesting', 'a: ' + '[' * 100 + ']' * 100 + '\n', [('syntax', None, None, 'deeper than 64 levels')])
case('top-level-list', '- apiVersion: nodeimg.dev/v1alpha1\n', [('wrong-type', '', None, 'a blueprint is a YAML mapping')])
case('top-level-scalar', 'hello\n', [('wrong-type', '', None, 'a blueprint is a YAML mapping')])
case('unknown-tag', 'apiVersion: !custom nodeimg.dev/v1alpha1\n', [('syntax', 'apiVersion', '1:13', 'unsupported YAML tag `!custom`')])
case('missing-sections', 'apiVersion: nodeimg.dev/v1alpha1\nkind: NodeBlueprint\n', [
    ('missing-field', '', '1:1', 'missing required field `metadata`'),
    ('missing-field', '', '1:1', 'missing required field `os`'),
    ('missing-field', '', '1:1', 'missing required field `runtime`'),
    ('missing-field', '', '1:1', 'missing required field `kubernetes`')])

# ---- structure against the schema ----
variant('wrong-api-version', [('apiVersion: nodeimg.dev/v1alpha1', 'apiVersion: nodeimg.dev/v1')],
        [('invalid-value', 'apiVersion', ('apiVersion', 'nodeimg'), 'the text `nodeimg.dev/v1` is not one of: nodeimg.dev/v1alpha1')])
variant('wrong-kind', [('kind: NodeBlueprint', 'kind: Blueprint')],
        [('invalid-value', 'kind', ('kind:', 'Blueprint'), 'is not one of: NodeBlueprint')])
variant('unknown-top-level', [('system:\n', 'acelerators: {}\nsystem:\n')],
        [('unknown-field', 'acelerators', ('acelerators',), 'unknown field `acelerators`')])
variant('unknown-nested', [('maxPods: 110', 'maxPod: 110')],
        [('unknown-field', 'kubernetes.kubelet.maxPod', ('maxPod',), 'unknown field `maxPod`')])
variant('unknown-in-list-item', [('speedGbps: 400', 'speedGbp: 400')],
        [('unknown-field', 'network.nics[0].speedGbp', ('speedGbp', 'speedGbp'), 'unknown field `speedGbp`'),
         ('missing-field', 'network.nics[0]', ('role: compute', '{'), 'missing required field `speedGbps`')])
variant('unknown-deep', [('fabricManager: {version: "580.105.08"}', 'fabricManager: {version: "580.105.08", mode: shared}')],
        [('unknown-field', 'accelerators.interconnect.fabricManager.mode', ('fabricManager', 'mode'), 'unknown field `mode`')])
variant('several-unknown', [('  patchLevel:', '  patchlevel: x\n  patchLevel:'), ('  cuda: "13.0"', '  cuda: "13.0"\n  cudaVersion: "13.0"'), ('  cache:', '  cash: {}\n  cache:')],
        [('unknown-field', 'os.patchlevel', ('patchlevel',), 'unknown field `patchlevel`'),
         ('unknown-field', 'accelerators.cudaVersion', ('cudaVersion',), 'unknown field `cudaVersion`'),
         ('unknown-field', 'system.cash', ('cash',), 'unknown field `cash`')])
variant('count-not-integer', [('count: 8\n', 'count: eight\n')],
        [('wrong-type', 'accelerators.count', ('count: eight', 'eight'), 'expected an integer, found the text `eight`')])
variant('count-negative', [('count: 8\n', 'count: -1\n')],
        [('invalid-value', 'accelerators.count', ('count: -1', '-1'), 'less than the minimum')])
variant('version-as-number', [('version: "22.04"', 'version: 22.04')],
        [('wrong-type', 'os.version', ('version: 22.04', '22.04'), 'expected text, found the number `22.04`')])
variant('yes-is-not-boolean', [('  containerToolkit:', '  eccRequired: yes\n  containerToolkit:')],
        [('wrong-type', 'accelerators.eccRequired', ('eccRequired', 'yes'), 'expected true or false, found the text `yes`')])
variant('bad-quantity', [('memory: 2Ti}', 'memory: 2TB}')],
        [('invalid-value', 'kubernetes.capacity.memory', ('memory: 2TB', '2TB'), 'unknown suffix `TB`')])
variant('bad-percent', [('highWatermark: 85%', 'highWatermark: 85')],
        [('invalid-value', 'system.cache.highWatermark', ('highWatermark', '85,'), 'write it with `%`')])
variant('bad-duration', [('system:\n', 'system:\n  timeSync: {servers: [ntp.example.com], makeStep: 1 second}\n')],
        [('invalid-value', 'system.timeSync.makeStep', ('makeStep', '1 second'), 'is not a duration')])
variant('bad-label-key', [('  deviceInjection:', '  labels: {"Bad Key/x": "y"}\n  deviceInjection:')],
        [('invalid-key', 'kubernetes.labels["Bad Key/x"]', ('Bad Key', '"Bad'), 'label prefix `Bad Key`')])
variant('bad-label-value', [('  deviceInjection:', '  labels: {example.com/tier: "has space"}\n  deviceInjection:')],
        [('invalid-value', 'kubernetes.labels["example.com/tier"]', ('has space', '"has'), 'label value `has space`')])
variant('bad-taint-effect', [('  deviceInjection:', '  taints: ["nvidia.com/gpu=present:NoSchedul"]\n  deviceInjection:')],
        [('invalid-value', 'kubernetes.taints[0]', ('NoSchedul', '"nvidia'), 'has effect `NoSchedul`')])
variant('relative-node-path', [('path: /var/cache/models', 'path: var/cache/models')],
        [('invalid-value', 'system.cache.path', ('path: var', 'var/'), 'must be absolute')])
variant('overlay-escapes', [('system:\n', 'files: {overlay: ../outside}\nsystem:\n')],
        [('invalid-value', 'files.overlay', ('overlay', '../'), 'must not contain `..`')])
variant('enum-typo', [('distro: ubuntu', 'distro: ubunto')],
        [('invalid-value', 'os.distro', ('distro', 'ubunto'), 'is not one of: ubuntu, debian, rhel, rocky, almalinux')])
variant('mode-as-number', [('system:\n', 'files:\n  overlay: overlay\n  modes: [{path: /usr/local/bin/x, mode: 755}]\nsystem:\n')],
        [('wrong-type', 'files.modes[0].mode', ('mode: 755', '755'), 'expected text, found the number `755`')])
variant('unknown-eviction-signal', [('maxPods: 110', 'maxPods: 110\n    evictionHard: {memory.availabel: 100Mi}')],
        [('unknown-field', 'kubernetes.kubelet.evictionHard["memory.availabel"]', ('memory.availabel', 'memory.availabel'), 'unknown field `memory.availabel`')])
variant('list-where-mapping', [('  capacity: {cpu: 224, memory: 2Ti}', '  capacity: [224, 2Ti]')],
        [('wrong-type', 'kubernetes.capacity', ('capacity:', '['), 'expected a mapping, found a list')])

# ---- semantic rules ----
variant('authority-both', [('  containerToolkit: "1.18.1"', '  containerToolkit: "1.18.1"\n  operator: {name: gpu-operator, version: v25.10.1, manages: [driver, device-plugin]}')],
        [('driver-authority', 'accelerators.operator.manages', ('manages', '['), 'exactly one component may own the driver')])
variant('authority-nobody', [('authority: preinstalled', 'authority: operator')],
        [('driver-authority', 'accelerators.driver.authority', ('authority', 'operator'), 'no operator manages the driver')])
variant('preinstalled-range', [('    version: "580.105.08"\n    authority', '    version: ">=580.65.06, <590"\n    authority')],
        [('driver-authority', 'accelerators.driver.version', ('>=580', '">='), 'pinned to one version')])
variant('cuda-needs-newer-driver', [('cuda: "13.0"', 'cuda: "12.4"'), ('{version: "580.105.08"}', '{version: "535.216.01"}'), ('    version: "580.105.08"\n', '    version: "535.216.01"\n')],
        [('cuda-driver', 'accelerators.driver.version', ('version: "535.216.01"', '"535', 1), 'CUDA 12.4 needs driver 550.54.14 or later')])
variant('nvswitch-without-fabric-manager', [('    fabricManager: {version: "580.105.08"}\n', '')],
        [('fabric-manager', 'accelerators.interconnect', ('nvswitch: true', 'nvswitch'), 'NVSwitch systems need Fabric Manager')])
variant('fabric-manager-version', [('{version: "580.105.08"}', '{version: "580.95.05"}')],
        [('fabric-manager', 'accelerators.interconnect.fabricManager.version', ('580.95.05', '"580'), 'must equal the driver version 580.105.08')])
variant('sriov-without-iommu', [('iommu: passthrough', 'iommu: off'), ('rdma: true}', 'rdma: true, sriovVfs: 8}')],
        [('iommu', 'boot.iommu', ('iommu: off', 'off'), 'SR-IOV on network.nics[0] needs the IOMMU')])
variant('kata-bios-iommu-disabled', [('    defaultRuntime: runc', '    defaultRuntime: runc\n    extraRuntimes: [kata]'), ('network:\n', 'firmware:\n  bios: {iommu: disabled}\nnetwork:\n')],
        [('iommu', 'firmware.bios.iommu', ('iommu: disabled', 'disabled'), 'Kata Containers needs VT-d/AMD-Vi')])
variant('cgroup-v1-on-1.35', [('cgroup: v2', 'cgroup: v1'), ('version: 1.34.2', 'version: 1.35.0')],
        [('kubernetes-cgroup-v2', 'os.cgroup', ('cgroup: v1', 'v1'), 'kubelet 1.35+ refuses to start on cgroup v1')])
variant('driver-kernel-too-old', [('kernel: 5.15.0-171-generic', 'kernel: 4.4.0-210-generic')],
        [('nvidia-driver-555-kernel', 'os.kernel', ('kernel: 4.4', '4.4'), 'NVIDIA driver 555 and later support Linux kernel 4.15 or newer only'),
         ('gpudirect', 'os.kernel', ('kernel: 4.4', '4.4'), 'GPUDirect RDMA without OFED goes through DMA-BUF, which needs Linux 5.12 or later')])
variant('mig-on-l40s', [('model: H100 SXM', 'model: L40S'), ('  interconnect:\n    nvswitch: true\n    fabricManager: {version: "580.105.08"}\n', ''), ('  pcie: {generation: 5, width: 16}', '  pcie: {generation: 4, width: 16}\n  sharing: {mode: mig, migProfile: all-1g.10gb}')],
        [('mig-capable', 'accelerators.sharing.mode', ('sharing', 'mig,'), 'L40S does not support MIG'),
         ('sharing', 'accelerators.sharing.mode', ('sharing', 'mig,'), 'sharing mode `mig` is applied by the GPU operator')])
variant('sharing-without-operator', [('  pcie: {generation: 5, width: 16}', '  pcie: {generation: 5, width: 16}\n  sharing: {mode: time-slicing, replicas: 4}')],
        [('sharing', 'accelerators.sharing.mode', ('sharing', 'time-slicing'), 'sharing mode `time-slicing` is applied by the GPU operator (the device plugin reads the rendered sharing configuration), and it does not deploy device-plugin')])
variant('memory-over-reserved', [('capacity: {cpu: 224, memory: 2Ti}', 'capacity: {cpu: 224, memory: 3Gi}')],
        [('reservation-capacity', 'kubernetes.kubelet', ('maxPods',), 'memory reservations, eviction and hugepages exceed capacity')])
variant('cpu-over-reserved', [('capacity: {cpu: 224,', 'capacity: {cpu: 1,'), ('{cpu: 500m, memory: 2Gi}', '{cpu: 950m, memory: 2Gi}')],
        [('reservation-capacity', 'kubernetes.kubelet', ('maxPods',), 'CPU reservations leave nothing for pods')])
variant('kernel-arg-required-and-forbidden', [('forbidden: [mitigations=off]', 'forbidden: [mitigations=off, pci]')],
        [('kernel-arg', 'boot.kernelArgs.forbidden[1]', ('forbidden', 'pci]'), '`pci` is forbidden but `pci=realloc=off` is required')])
variant('kernel-arg-contradicts-iommu', [('required: [pci=realloc=off]', 'required: [pci=realloc=off, iommu=off]')],
        [('kernel-arg', 'boot.kernelArgs.required[1]', ('required', 'iommu=off'), 'contradicts `iommu=pt`, which boot.iommu implies')])
variant('hugepages-on-cmdline', [('required: [pci=realloc=off]', 'required: [pci=realloc=off, hugepages=1024]')],
        [('hugepages', 'boot.kernelArgs.required[1]', ('required', 'hugepages'), 'declare them in boot.hugepages')])
variant('hugepage-size', [('  iommu: passthrough\n', '  iommu: passthrough\n  hugepages: [{size: 4Mi, count: 8}]\n')],
        [('hugepages', 'boot.hugepages[0].size', ('hugepages:', '4Mi'), 'neither 2Mi nor 1Gi')])
variant('watermarks-reversed', [('highWatermark: 85%, lowWatermark: 70%', 'highWatermark: 60%, lowWatermark: 70%')],
        [('cache-watermarks', 'system.cache.lowWatermark', ('lowWatermark', '70%'), 'must be below the high watermark 60%')])
variant('kubelet-extra-unknown', [('maxPods: 110', 'maxPods: 110\n    extraConfig: {serializeImagePull: false}')],
        [('extra-config', 'kubernetes.kubelet.extraConfig.serializeImagePull', ('extraConfig', 'serializeImagePull'), 'is not a KubeletConfiguration field')])
variant('kubelet-extra-protected', [('maxPods: 110', 'maxPods: 110\n    extraConfig: {maxPods: 250}')],
        [('extra-config', 'kubernetes.kubelet.extraConfig.maxPods', ('extraConfig', 'maxPods:'), 'owned by a typed field; set kubernetes.kubelet.maxPods')])
variant('containerd-extra-wrong-plugin', [('    defaultRuntime: runc', '    defaultRuntime: runc\n    extraConfig:\n      plugins."io.containerd.runtime.v1.linux".shim_debug: true')],
        [('extra-config', 'runtime.containerd.extraConfig["plugins.\\"io.containerd.runtime.v1.linux\\".shim_debug"]', ('plugins.', 'plugins'), '`io.containerd.runtime.v1.linux` is not a plugin of containerd 2.1.4 (config version 3)')])
variant('containerd-extra-protected', [('    defaultRuntime: runc', '    defaultRuntime: runc\n    extraConfig:\n      plugins."io.containerd.cri.v1.runtime".cdi_spec_dirs: [/opt/cdi]')],
        [('extra-config', 'runtime.containerd.extraConfig["plugins.\\"io.containerd.cri.v1.runtime\\".cdi_spec_dirs"]', ('plugins.', 'plugins'), 'owned by a typed field; set runtime.cdi.specDirs')])
variant('overlay-missing', [('system:\n', 'files: {overlay: no-such-overlay}\nsystem:\n')],
        [('missing-file', 'files.overlay', ('no-such-overlay', 'no-such'), 'cannot read')])
variant('overlay-is-a-file', [('system:\n', 'files: {overlay: files/not-a-cert.pem}\nsystem:\n')],
        [('named-file', 'files.overlay', ('overlay', 'files/'), 'is not a folder')])
variant('overlay-link-leaves-folder', [('system:\n', 'files: {overlay: files/outside-dir}\nsystem:\n')],
        [('named-file', 'files.overlay', ('overlay', 'files/'), "outside the blueprint's folder")])
CERTS = '  certificates:\n    - {name: corp, file: %s}\n'
variant('certificate-is-proc-environ', [('system:\n', 'system:\n' + CERTS % 'files/environ.pem')],
        [('named-file', 'system.certificates[0].file', ('file:', 'files/'), "outside the blueprint's folder")])
variant('certificate-link-leaves-folder', [('system:\n', 'system:\n' + CERTS % 'files/outside.pem')],
        [('named-file', 'system.certificates[0].file', ('file:', 'files/'), "outside the blueprint's folder")])
variant('certificate-not-pem', [('system:\n', 'system:\n' + CERTS % 'files/not-a-cert.pem')],
        [('named-file', 'system.certificates[0].file', ('file:', 'files/'), 'holds no PEM certificate')])
variant('certificate-is-private-key', [('system:\n', 'system:\n' + CERTS % 'files/key.pem')],
        [('named-file', 'system.certificates[0].file', ('file:', 'files/'), 'private key, which must never be copied into an image')])
variant('rocm-on-nvidia', [('  cuda: "13.0"', '  cuda: "13.0"\n  rocm: "6.2"')],
        [('vendor-mismatch', 'accelerators.rocm', ('rocm', '"6.2"'), 'ROCm applies to AMD GPUs')])
variant('duplicate-taint', [('  deviceInjection:', '  taints: ["gpu=a:NoSchedule", "gpu=b:NoSchedule"]\n  deviceInjection:')],
        [('duplicate', 'kubernetes.taints[1]', ('taints', '"gpu=b'), 'repeats a key and effect')])
variant('cdi-without-generator', [('    generator: nvidia-ctk\n', '    generator: none\n')],
        [('cdi-generator', 'runtime.cdi.generator', ('generator: none', 'none'), 'nothing generates the specs')])
variant('dra-too-old', [('version: 1.34.2', 'version: 1.30.6'), ('deviceInjection: {mode: device-plugin}', 'deviceInjection: {mode: dra}')],
        [('dra-structured-parameters', 'kubernetes.version', ('version: 1.30.6', '1.30'), 'Kubernetes is 1.30.6, needs >=1.32')])
variant('infiniband-mtu', [('mtu: 4096', 'mtu: 9000')],
        [('nic', 'network.nics[0].mtu', ('mtu: 9000', '9000'), 'InfiniBand MTU 9000 is not one of')])
variant('nvidia-runtime-on-amd', [('vendor: nvidia', 'vendor: amd'), ('model: H100 SXM', 'model: MI300X'), ('  cuda: "13.0"\n', '  rocm: "6.2"\n'), ('  interconnect:\n    nvswitch: true\n    fabricManager: {version: "580.105.08"}\n', ''), ('    generator: nvidia-ctk\n', '    generator: amd-ctk\n'), ('  containerToolkit: "1.18.1"\n', '  containerToolkit: "1.2.0"\n'), ('defaultRuntime: runc', 'defaultRuntime: nvidia')],
        [('vendor-mismatch', 'runtime.containerd.defaultRuntime', ('defaultRuntime', 'nvidia'), 'the nvidia runtime does not serve AMD GPUs')])

variant('pcie-width', [('pcie: {generation: 5, width: 16}', 'pcie: {generation: 7, width: 12}')],
        [('invalid-value', 'accelerators.pcie.generation', ('pcie:', '7'), 'the number `7` is not one of: 1, 2, 3, 4, 5, 6'),
         ('invalid-value', 'accelerators.pcie.width', ('pcie:', '12'), 'the number `12` is not one of: 1, 2, 4, 8, 16')])
variant('pcie-width-x32', [('pcie: {generation: 5, width: 16}', 'pcie: {generation: 5, width: 32}')],
        [('invalid-value', 'accelerators.pcie.width', ('pcie:', '32'), 'the number `32` is not one of: 1, 2, 4, 8, 16')])
variant('pcie-width-as-text', [('pcie: {generation: 5, width: 16}', 'pcie: {generation: 5, width: x16}')],
        [('invalid-value', 'accelerators.pcie.width', ('pcie:', 'x16'), 'the text `x16` is not one of: 1, 2, 4, 8, 16')])
variant('pcie-too-fast-for-model', [('model: H100 SXM', 'model: L40S'), ('  interconnect:\n    nvswitch: true\n    fabricManager: {version: "580.105.08"}\n', '')],
        [('pcie-link', 'accelerators.pcie.generation', ('pcie:', '5'), 'links at PCIe Gen4 at most; Gen5 can never be reached')])

# ---- values that must be one token in a line-based file (sshd, logrotate, tmpfiles, units, chrony, audit) ----
variant('version-not-a-tag', [('  version: "1"', '  version: "v1+build.7"')],
        [('invalid-value', 'metadata.version', ('version: "v1', '"v1'), 'cannot be an image tag: it holds `+`')])
variant('patch-level-two-lines', [('patchLevel: "2026-11-15"', 'patchLevel: "2026-11-15\\nExecStart=/bin/sh"')],
        [('invalid-value', 'os.patchLevel', ('patchLevel', '"2026'), 'holds the control character')])
SEC = 'security:\n  ssh:\n    allowGroups: [%s]\n'
variant('ssh-group-quote', [('system:\n', SEC % "'gpu\"ops'" + 'system:\n')],
        [('invalid-value', 'security.ssh.allowGroups[0]', ('allowGroups', "'gpu"), 'is not an sshd pattern')])
variant('ssh-user-space', [('system:\n', 'security:\n  ssh:\n    allowUsers: ["alice bob"]\nsystem:\n')],
        [('invalid-value', 'security.ssh.allowUsers[0]', ('allowUsers', '"alice'), 'is not an sshd pattern')])
ROT = '  logs:\n    rotate: [{name: app, path: "%s", frequency: daily, keep: 3}]\n'
variant('logrotate-path-brace', [('  cache:', ROT % '/var/log/x}' + '  cache:')],
        [('invalid-value', 'system.logs.rotate[0].path', ('rotate', '"/var'), "holds '}'")])
variant('logrotate-path-relative', [('  cache:', ROT % 'var/log/x' + '  cache:')],
        [('invalid-value', 'system.logs.rotate[0].path', ('rotate', '"var'), 'must be absolute')])
variant('tmpfiles-path-specifier', [('path: /var/cache/models', 'path: "/var/cache/%m"')],
        [('invalid-value', 'system.cache.path', ('path:', '"/var'), "holds '%'")])
variant('cdi-dir-shell-variable', [('    generator: nvidia-ctk\n', '    generator: nvidia-ctk\n    specDirs: ["/run/cdi${X}"]\n')],
        [('invalid-value', 'runtime.cdi.specDirs[0]', ('specDirs', '"/run'), "holds '$'")])
variant('mount-point-space', [('  cache:', '  partitions: [{label: models, mountPoint: "/var/my models", filesystem: xfs}]\n  cache:')],
        [('invalid-value', 'system.partitions[0].mountPoint', ('mountPoint', '"/var/my'), "holds ' '")])
variant('time-server-comment', [('  cache:', '  timeSync: {servers: ["time1#example.com"]}\n  cache:')],
        [('invalid-value', 'system.timeSync.servers[0]', ('timeSync', '"time1'), 'is neither a host name')])
variant('search-domain-two-words', [('  cache:', '  dns: {servers: [10.0.0.2], searchDomains: ["corp example.com"]}\n  cache:')],
        [('invalid-value', 'system.dns.searchDomains[0]', ('searchDomains', '"corp'), 'is not a DNS name')])
AUD = 'security:\n  audit: [{path: /etc/kubernetes, permissions: %s, key: %s}]\n'
variant('audit-key-injection', [('system:\n', AUD % ('wa', '"k8s -w /etc/shadow"') + 'system:\n')],
        [('invalid-value', 'security.audit[0].key', ('audit', '"k8s'), 'is not an audit key')])
variant('audit-perms-unknown', [('system:\n', AUD % ('rwq', 'k8s') + 'system:\n')],
        [('invalid-value', 'security.audit[0].permissions', ('audit', 'rwq'), 'is not an audit permission filter')])
variant('registry-host-with-scheme', [('    defaultRuntime: runc', '    defaultRuntime: runc\n    registries: [{host: "https://registry.corp", mirrors: ["mirror.corp"]}]')],
        [('invalid-value', 'runtime.containerd.registries[0].host', ('registries', '"https'), 'is not a registry host'),
         ('invalid-value', 'runtime.containerd.registries[0].mirrors[0]', ('registries', '"mirror'), 'must start with https:// or http://')])
variant('sysctl-two-spellings', [('system:\n', 'security:\n  sysctls:\n    kernel/kptr_restrict: 1\n    kernel.kptr_restrict: 2\nsystem:\n')],
        # The document's keys are read in sorted order, so the later spelling in sort order is the one refused.
        [('invalid-value', 'security.sysctls["kernel/kptr_restrict"]', ('kernel/kptr', '1'), '`kernel/kptr_restrict` and `kernel.kptr_restrict` name the same key')])
variant('sysctl-value-equals', [('system:\n', 'security:\n  sysctls: {vm.swappiness: "1 = 2"}\nsystem:\n')],
        [('invalid-value', 'security.sysctls["vm.swappiness"]', ('sysctls', '"1'), 'holds `=`')])

# ---- sizes and durations that do not fit what reads them ----
variant('shm-size-negative', [('  cache:', '  shmSize: -1Gi\n  cache:')],
        [('invalid-value', 'system.shmSize', ('shmSize', '-1Gi'), 'is negative')])
variant('partition-size-overflows', [('  cache:', '  partitions: [{label: models, mountPoint: /var/models, filesystem: xfs, size: 99999999999999999999Ki}]\n  cache:')],
        [('invalid-value', 'system.partitions[0].size', ('partitions', '9999'), 'more bytes than fit in 64 bits')])
variant('reserved-memory-negative', [('{cpu: 500m, memory: 2Gi}', '{cpu: 500m, memory: -1Gi}')],
        [('invalid-value', 'kubernetes.kubelet.systemReserved.memory', ('systemReserved', '-1Gi'), 'is negative')])
variant('reserved-cpu-negative', [('{cpu: 500m, memory: 2Gi}', '{cpu: -500m, memory: 2Gi}')],
        [('invalid-value', 'kubernetes.kubelet.systemReserved.cpu', ('systemReserved', '-500m'), 'is negative')])
variant('journal-size-negative', [('  cache:', '  logs: {journalMaxUse: -1Gi}\n  cache:')],
        [('invalid-value', 'system.logs.journalMaxUse', ('journalMaxUse', '-1Gi'), 'is negative')])
variant('journal-retention-overflows', [('  cache:', '  logs: {journalMaxRetention: 99999999999999999d}\n  cache:')],
        [('invalid-value', 'system.logs.journalMaxRetention', ('journalMaxRetention', '9999'), 'longer than 292 years')])
variant('rotate-size-negative', [('  cache:', '  logs:\n    rotate: [{name: app, path: /var/log/app.log, frequency: daily, keep: 3, maxSize: -100Mi}]\n  cache:')],
        [('invalid-value', 'system.logs.rotate[0].maxSize', ('rotate', '-100Mi'), 'is negative')])
variant('eviction-negative', [('maxPods: 110', 'maxPods: 110\n    evictionHard: {memory.available: -100Mi}')],
        [('invalid-value', 'kubernetes.kubelet.evictionHard["memory.available"]', ('memory.available', '-100Mi'), 'cannot be negative')])
variant('memory-in-millibytes', [('memory: 2Ti}', 'memory: 100m}')],
        [('invalid-value', 'kubernetes.capacity.memory', ('memory: 100m', '100m'), 'did you mean `100Mi`?')])

# ---- sharing: which settings go with which mode ----
variant('mig-without-profile', [('  pcie: {generation: 5, width: 16}', '  pcie: {generation: 5, width: 16}\n  sharing: {mode: mig}')],
        [('missing-field', 'accelerators.sharing', ('sharing', 'sharing'), 'missing required field `migProfile`')])
variant('mig-with-replicas', [('  pcie: {generation: 5, width: 16}', '  pcie: {generation: 5, width: 16}\n  sharing: {mode: mig, migProfile: all-1g.10gb, replicas: 4}')],
        [('invalid-field', 'accelerators.sharing.replicas', ('sharing', 'replicas'), '`replicas` does not apply to mode `mig`'),
         ('sharing', 'accelerators.sharing.mode', ('sharing', 'mig'), 'it does not deploy device-plugin or mig-manager')])
variant('time-slicing-one-replica', [('  pcie: {generation: 5, width: 16}', '  pcie: {generation: 5, width: 16}\n  sharing: {mode: time-slicing, replicas: 1}')],
        [('invalid-value', 'accelerators.sharing.replicas', ('sharing', '1}'), 'less than the minimum of 2')])

# ---- containerd extraConfig, per key and version ----
variant('containerd-extra-v2-key-on-v3', [('    defaultRuntime: runc', '    defaultRuntime: runc\n    extraConfig:\n      plugins."io.containerd.grpc.v1.cri".max_concurrent_downloads: 8')],
        [('extra-config', 'runtime.containerd.extraConfig["plugins.\\"io.containerd.grpc.v1.cri\\".max_concurrent_downloads"]', ('plugins.', 'plugins'), 'config version 2 (containerd 1.x) setting of io.containerd.grpc.v1.cri')])
variant('containerd-extra-parent-table', [('    defaultRuntime: runc', '    defaultRuntime: runc\n    extraConfig:\n      plugins."io.containerd.cri.v1.runtime".containerd: {default_runtime_name: nvidia, runtimes: {nvidia: {runtime_type: io.containerd.runc.v2, options: {BinaryName: /tmp/evil}}}}')],
        [('extra-config', 'runtime.containerd.extraConfig["plugins.\\"io.containerd.cri.v1.runtime\\".containerd"]', ('plugins.', 'plugins'), 'is a table that holds')])
variant('containerd-extra-registry-table', [('    defaultRuntime: runc', '    defaultRuntime: runc\n    extraConfig:\n      plugins."io.containerd.cri.v1.images".registry: {config_path: /tmp/evil-certs}')],
        [('extra-config', 'runtime.containerd.extraConfig["plugins.\\"io.containerd.cri.v1.images\\".registry"]', ('plugins.', 'plugins'), 'set runtime.containerd.registries instead')])
variant('containerd-extra-two-spellings', [('    defaultRuntime: runc', '    defaultRuntime: runc\n    extraConfig:\n      metrics.address: "127.0.0.1:1338"\n      metrics."address": "127.0.0.1:1339"')],
        [('invalid-value', 'runtime.containerd.extraConfig["metrics.address"]', ('metrics.address', '"127'), '`metrics.address` and `metrics."address"` name the same key')])
variant('containerd-extra-bad-key', [('    defaultRuntime: runc', '    defaultRuntime: runc\n    extraConfig:\n      plugins.io.containerd: 1')],
        [('extra-config', 'runtime.containerd.extraConfig["plugins.io.containerd"]', ('plugins.', 'plugins'), '`io` is not a plugin of containerd 2.1.4')])

# ---- who provides what ----
variant('cuda-driver-range-too-wide', [('    version: "580.105.08"\n    authority: preinstalled', '    version: ">=570, <590"\n    authority: operator'), ('  containerToolkit: "1.18.1"', '  containerToolkit: "1.18.1"\n  operator: {name: gpu-operator, version: v25.10.1, manages: [driver, device-plugin]}'), ('{version: "580.105.08"}', '{version: "580.105.08"}')],
        [('cuda-driver', 'accelerators.driver.version', ('version: ">=570', '">='), 'CUDA 13.0 needs driver 580.65.06 or later; the constraint `>=570, <590` also admits older drivers'),
         ('cuda-13-minor-version-compat', 'accelerators.driver.version', ('version: ">=570', '">='), 'the NVIDIA driver is >=570, <590, needs >=580'),
         ('operator-driver-version', 'accelerators.driver.version', ('version: ">=570', '">='), 'the operator installs one driver image')])
variant('operator-driver-only', [('    version: "580.105.08"\n    authority: preinstalled', '    version: "580.105.08"\n    authority: operator'), ('  containerToolkit: "1.18.1"\n', '  operator: {name: gpu-operator, version: v25.10.1, manages: [driver]}\n'), ('    generator: nvidia-ctk\n', '    generator: operator\n')],
        [('cdi-generator', 'runtime.cdi.generator', ('generator: operator', 'operator'), 'it does not manage the toolkit'),
         ('toolkit-authority', 'accelerators.containerToolkit', ('accelerators:', 'accelerators'), 'nothing provides the NVIDIA container toolkit'),
         ('device-injection', 'accelerators.operator.manages', ('manages', '[driver'), 'nothing deploys one')])
variant('cuda-missing', [('  cuda: "13.0"\n', '')],
        [('missing-field', 'accelerators', ('accelerators:', 'accelerators'), 'NVIDIA accelerators need `cuda`')])
variant('device-injection-missing', [('  deviceInjection: {mode: device-plugin}\n', '')],
        [('device-injection', 'kubernetes.deviceInjection.mode', ('kubernetes:', 'kubernetes'), 'no device plugin or DRA driver hands them to pods')])
# `cdi` where the injection mode goes: the allowed values, not the validator's words.
variant('injection-mode-cdi', [('deviceInjection: {mode: device-plugin}', 'deviceInjection: {mode: cdi}')],
        [('invalid-value', 'kubernetes.deviceInjection.mode', ('mode: cdi', 'cdi'), 'the text `cdi` is not one of: device-plugin, dra, none')])
# A structural and a semantic error in one file: both, in one pass.
variant('schema-and-rule-errors', [('  version: 1.34.2\n', '  version: 1.34.2\n  nodeLabel: gpu\n'),
                                   ('highWatermark: 85%, lowWatermark: 70%', 'highWatermark: 60%, lowWatermark: 70%')],
        [('unknown-field', 'kubernetes.nodeLabel', ('nodeLabel', 'nodeLabel'), 'unknown field `nodeLabel`'),
         ('cache-watermarks', 'system.cache.lowWatermark', ('lowWatermark', '70%'), 'must be below the high watermark 60%')])
variant('zero-gpus', [('count: 8\n', 'count: 0\n')],
        [('gpu-count', 'accelerators.count', ('count: 0', '0'), 'declare at least one GPU')])

os.makedirs(OUT, exist_ok=True)
for f in os.listdir(OUT):
    p = os.path.join(OUT, f)
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p)
    else:
        os.remove(p)
# Files the fixtures name beside themselves: links that leave the folder,
# text that is not a certificate, a private key. (A FIFO cannot be committed;
# tests/it/blueprint_files.rs makes one at run time.)
FILES = os.path.join(OUT, 'files')
os.makedirs(FILES)
os.symlink('/proc/self/environ', os.path.join(FILES, 'environ.pem'))
os.symlink('../../valid/gpu-base.yaml', os.path.join(FILES, 'outside.pem'))
os.symlink('../../valid', os.path.join(FILES, 'outside-dir'))
open(os.path.join(FILES, 'not-a-cert.pem'), 'w').write('MY_REGISTRY_TOKEN=supersecret\n')
open(os.path.join(FILES, 'key.pem'), 'w').write(
    '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIBvZ3jN4wV8Ck7lJ2oC9H6cFQx5XzNn8n1qv3aEo0n3n\n-----END PRIVATE KEY-----\n')
for name, text, exps in cases:
    lines = []
    for code, path, where, msg in exps:
        path_s = '-' if path is None else ('.' if path == '' else path)
        lines.append(f"# expect: {code} | {path_s} | {where or '-'} | {msg}")
    body = text.encode('utf-8', 'surrogateescape')
    trailer = ('\n' if text and not text.endswith('\n') else '') + '\n'.join(lines) + '\n'
    # expectations go after the content so they never shift its line numbers
    open(os.path.join(OUT, name + '.yaml'), 'wb').write(body + trailer.encode())
# binary garbage: kept as a separate file whose expectations live beside it
garbage = bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe, 0x00, 0x01])
open(os.path.join(OUT, 'binary-garbage.bin'), 'wb').write(garbage)
print(len(cases) + 1, 'fixtures')
