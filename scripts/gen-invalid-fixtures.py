#!/usr/bin/env python3
"""Regenerates tests/fixtures/invalid: broken blueprints, each followed by
`# expect: code | path | line:col | message` lines that tests/it/invalid_blueprints.rs
checks. Semantic cases are variants of tests/fixtures/valid/gpu-base.yaml; the
expected line and column are computed here from the fixture's own text (the
line holding an anchor string), never from nodeimg's output."""
import os
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
variant('preinstalled-range', [('    version: "580.105.08"\n    authority', '    version: ">=580, <590"\n    authority')],
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
variant('mig-on-l40s', [('model: H100 SXM', 'model: L40S'), ('  interconnect:\n    nvswitch: true\n    fabricManager: {version: "580.105.08"}\n', ''), ('  pcie: {generation: 5, width: 16}', '  pcie: {generation: 4, width: 16}\n  sharing: {mode: mig, migProfile: all-1g.10gb}')],
        [('mig-capable', 'accelerators.sharing.mode', ('sharing', 'mig,'), 'L40S does not support MIG')])
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
variant('nvidia-runtime-on-amd', [('vendor: nvidia', 'vendor: amd'), ('model: H100 SXM', 'model: MI300X'), ('  cuda: "13.0"\n', '  rocm: "6.2"\n'), ('  interconnect:\n    nvswitch: true\n    fabricManager: {version: "580.105.08"}\n', ''), ('    generator: nvidia-ctk\n', '    generator: amd-ctk\n'), ('  containerToolkit: "1.18.1"\n', ''), ('defaultRuntime: runc', 'defaultRuntime: nvidia')],
        [('vendor-mismatch', 'runtime.containerd.defaultRuntime', ('defaultRuntime', 'nvidia'), 'the nvidia runtime does not serve AMD GPUs')])

variant('pcie-width', [('pcie: {generation: 5, width: 16}', 'pcie: {generation: 7, width: 12}')],
        [('pcie-link', 'accelerators.pcie.generation', ('pcie:', '7'), 'PCIe generation 7 does not exist'),
         ('pcie-link', 'accelerators.pcie.generation', ('pcie:', '7'), 'links at PCIe Gen5 at most; Gen7 can never be reached'),
         ('pcie-link', 'accelerators.pcie.width', ('pcie:', '12'), 'x12 is not a PCIe link width')])
variant('zero-gpus', [('count: 8\n', 'count: 0\n')],
        [('gpu-count', 'accelerators.count', ('count: 0', '0'), 'declare at least one GPU')])

os.makedirs(OUT, exist_ok=True)
for f in os.listdir(OUT):
    os.remove(os.path.join(OUT, f))
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
