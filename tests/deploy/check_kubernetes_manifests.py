#!/usr/bin/env python3
"""Checks the Kubernetes manifests (configs/kubernetes/*.yaml) against what the build installs.

  check_kubernetes_manifests.py --source DIR --build DIR [--prefix /usr] [FILE...]
  check_kubernetes_manifests.py --source DIR --build DIR --bad-fixtures DIR

Every YAML document must parse. In every pod spec (a Pod, or any workload's pod template):
- each --flag a container passes to nccltune, nccltuned or nccltune-env (in command/args, or in
  an `sh -c` script) must be in that binary's --help (the subcommand's, for `nccltune env`);
- each hostPath that names nccltune must be a path `cmake --install` puts a file at (for the
  manifests' prefix, /usr: the paths of the Debian package) or a default compiled into the
  binaries: the config (its sysconfdir for that prefix), the store (env_config.h), node.yaml
  (node_paths.h), nccl.env, the state and metrics directories (node_daemon.cpp,
  daemon_config.h), or the shipped config's value for them. libnccl-env-nccltune.so is expected
  beside libnccl-tuner-nccltune.so whether or not this build has it;
- each nccltune mount must sit where the container's reader looks: nccltuned (its flags, else
  the defaults), `nccltune env` and nccltune-env (flags, NCCLTUNE_CONFIG), and the plugins
  (NCCLTUNE_PROFILES, NCCLTUNE_CONFIG, NCCLTUNE_NODE_STATE, NCCLTUNE_PROFILE);
- NCCL_ENV_PLUGIN and NCCL_TUNER_PLUGIN must name the mounted plugin, and a plugin user must
  have node.yaml and the store (or NCCLTUNE_PROFILE) mounted;
- every nccltune mount is readOnly, except the directories nccltuned writes, which must not be.

Errors are one line each: `file:line: Kind/name: field: problem`. Exit 0 when none, 1 otherwise.
With --bad-fixtures, each bad-*.yaml there is checked alone and must fail with the error its
`# expect: TEXT` line names, so the checks are shown to catch what they are for.
"""

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("check_kubernetes_manifests: python3 cannot import yaml (PyYAML; Debian: apt-get install python3-yaml)",
          file=sys.stderr)
    sys.exit(1)

BINARIES = ("nccltune", "nccltuned", "nccltune-env")
ENV_PLUGIN = "libnccl-env-nccltune.so"
TUNER_PLUGIN = "libnccl-tuner-nccltune.so"
PLUGIN_VARIABLES = {"NCCL_ENV_PLUGIN": ("env-plugin", ENV_PLUGIN), "NCCL_TUNER_PLUGIN": ("tuner-plugin", TUNER_PLUGIN)}
DAEMON_WRITES = ("runtime-dir", "state-dir", "metrics-dir")
SHELL_OPERATORS = {";", "&&", "||", "|", "&", "(", ")", ";;"}


class SetupError(Exception):
    """The install layout or the binaries could not be read: the check cannot run."""


def norm(path):
    return os.path.normpath(path) if path.startswith("/") else path


def sysconfdir(prefix):
    """GNUInstallDirs' CMAKE_INSTALL_FULL_SYSCONFDIR for a prefix."""
    prefix = norm(prefix)
    if prefix in ("/", "/usr"):
        return "/etc"
    if prefix.startswith("/opt/"):
        return "/etc" + prefix
    return prefix + "/etc"


def source_string(source, relative, pattern):
    path = os.path.join(source, relative)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise SetupError(f"{relative}: cannot read: {e.strerror}")
    found = re.search(pattern, text)
    if not found:
        raise SetupError(f"{relative}: no match for {pattern!r}: the source changed; update this check")
    return found.group(1)


def parse_help(text):
    """--flags of a CLI11 --help text: {flag: takes_value}, and the subcommands it lists."""
    flags, subcommands, in_subcommands = {}, [], False
    for line in text.splitlines():
        if line.strip() == "Subcommands:":
            in_subcommands = True
            continue
        if in_subcommands:
            m = re.match(r"^\s+([a-z][\w-]*)\s{2,}", line)
            if m:
                subcommands.append(m.group(1))
            continue
        m = re.match(r"^\s+(?:-\w,)?(--[\w-]+)", line)
        if m:
            rest = line[m.end():]
            flags[m.group(1)] = bool(re.match(r"^ \S", rest))
    return flags, subcommands


class Layout:
    """The paths nccltune installs and reads, for the manifests' prefix."""

    def __init__(self, source, build, prefix, workdir):
        self.build, self.prefix = build, norm(prefix)
        self.help, self.help_texts = {}, {}
        for name in BINARIES:
            self.help[name] = parse_help(self.run_help([name]))
        self.sub_help = {}

        # Defaults compiled in (sources), cross-checked with the built binaries' --help.
        self.node_state = source_string(source, "tuner/node/node_paths.h",
                                        r'kDefaultNodeStateFile\s*=\s*"([^"]+)"')
        store = source_string(source, "tuner/node/env_config.h", r'kDefaultProfileStore\s*=\s*"([^"]+)"')
        state_dir = source_string(source, "tuner/daemon/daemon_config.h", r'state_dir\s*=\s*"([^"]+)"')
        metrics_dir = source_string(source, "tuner/daemon/daemon_config.h", r'metrics_dir\s*=\s*"([^"]+)"')
        env_file = source_string(source, "tuner/daemon/node_daemon.cpp", r'kEnvFile\s*=\s*"([^"]+)"')
        runtime_dir = os.path.dirname(self.node_state)
        built_node_state = re.search(r"--node-state TEXT=(\S+)", self.run_help(["nccltune-env"]))
        if not built_node_state or built_node_state.group(1) != self.node_state:
            raise SetupError(f"nccltune-env --help: default --node-state is not {self.node_state} "
                             "(tuner/node/node_paths.h): the build is stale")
        compiled_config = re.search(r"--config TEXT=(\S+)", self.run_help(["nccltuned"]))
        if not compiled_config:
            raise SetupError("nccltuned --help: no default for --config")
        compiled_config = compiled_config.group(1)

        # cmake --install into a scratch DESTDIR. The config goes to the path compiled in (the
        # sysconfdir of the prefix the build was configured with), whatever --prefix says.
        destdir = os.path.join(workdir, "dest")
        env = dict(os.environ, DESTDIR=destdir)
        try:
            result = subprocess.run(["cmake", "--install", build, "--prefix", self.prefix], env=env,
                                    capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise SetupError(f"cmake --install {build}: {e}")
        if result.returncode != 0:
            last = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
            raise SetupError(f"cmake --install {build} --prefix {self.prefix}: exit {result.returncode}: {last[0]}")
        if not os.path.isfile(destdir + compiled_config):
            raise SetupError(f"cmake --install put no config at {compiled_config}, the path nccltuned --help names")
        configured_prefix = self.cache_value("CMAKE_INSTALL_PREFIX") or "/usr/local"
        etc = sysconfdir(configured_prefix)
        if compiled_config.startswith(etc + "/"):
            self.config = sysconfdir(self.prefix) + compiled_config[len(etc):]
        else:
            self.config = compiled_config

        # The shipped config's values win over the compiled defaults; both are known paths.
        with open(destdir + compiled_config, encoding="utf-8") as f:
            shipped = yaml.safe_load(f) or {}
        if not isinstance(shipped, dict):
            raise SetupError(f"{compiled_config} (installed): not a mapping")
        env_section = shipped.get("env") or {}
        daemon_section = shipped.get("daemon") or {}
        self.store = norm(env_section.get("store") or store)
        self.runtime_dir = norm(daemon_section.get("runtime_dir") or runtime_dir)
        self.state_dir = norm(daemon_section.get("state_dir") or state_dir)
        self.metrics_dir = norm(daemon_section.get("metrics_dir") or metrics_dir)

        self.known = {}  # host path -> role
        for root, _, files in os.walk(destdir):
            for name in files:
                path = os.path.join(root, name)[len(destdir):]
                if path == compiled_config:
                    continue
                role = "installed"
                if name == ENV_PLUGIN:
                    role = "env-plugin"
                elif name == TUNER_PLUGIN:
                    role = "tuner-plugin"
                elif os.access(os.path.join(root, name), os.X_OK) and re.search(r"/(s?bin|libexec)/", path):
                    role = "binary:" + name
                self.known[path] = role
        tuner_plugin = [p for p, r in self.known.items() if r == "tuner-plugin"]
        if not tuner_plugin:
            raise SetupError(f"cmake --install put no {TUNER_PLUGIN}")
        # The env plugin may not be built yet: it goes where the tuner plugin goes.
        self.known.setdefault(os.path.join(os.path.dirname(tuner_plugin[0]), ENV_PLUGIN), "env-plugin")
        for name in BINARIES:
            if "binary:" + name not in self.known.values():
                raise SetupError(f"cmake --install put no {name} in a bin/ or sbin/ directory")
        for path, role in ((self.config, "config-file"), (os.path.dirname(self.config), "config-dir"),
                           (store, "store"), (self.store, "store"),
                           (runtime_dir, "runtime-dir"), (self.runtime_dir, "runtime-dir"),
                           (self.node_state, "node-state"), (os.path.join(self.runtime_dir, env_file), "nccl-env"),
                           (state_dir, "state-dir"), (self.state_dir, "state-dir"),
                           (metrics_dir, "metrics-dir"), (self.metrics_dir, "metrics-dir")):
            self.known.setdefault(norm(path), role)

    def cache_value(self, name):
        try:
            with open(os.path.join(self.build, "CMakeCache.txt"), encoding="utf-8") as f:
                for line in f:
                    if line.startswith(name + ":"):
                        return line.split("=", 1)[1].strip()
        except OSError:
            pass
        return None

    def run_help(self, words):
        if tuple(words) not in self.help_texts:
            self.help_texts[tuple(words)] = self.read_help(words)
        return self.help_texts[tuple(words)]

    def read_help(self, words):
        binary = os.path.join(self.build, words[0])
        try:
            result = subprocess.run([binary] + words[1:] + ["--help"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise SetupError(f"{' '.join(words)} --help: {e}")
        if result.returncode != 0:
            raise SetupError(f"{binary} {' '.join(words[1:] + ['--help'])}: exit {result.returncode}")
        return result.stdout

    def flags_of(self, name, subcommand):
        flags = dict(self.help[name][0])
        if subcommand:
            if subcommand not in self.sub_help:
                self.sub_help[subcommand] = parse_help(self.run_help([name, subcommand]))[0]
            flags.update(self.sub_help[subcommand])
        return flags

    def role_paths(self, role):
        return sorted(p for p, r in self.known.items() if r == role)


def path_text(path):
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else ("." if text else "") + str(part)
    return text


def node_lines(node, path, lines, duplicates):
    """The line of every field of a composed document; keys given twice go to `duplicates`."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if path + (key.value,) in lines:
                duplicates.append((path + (key.value,), key.start_mark.line + 1))
            lines[path + (key.value,)] = key.start_mark.line + 1
            node_lines(value, path + (key.value,), lines, duplicates)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[path + (i,)] = item.start_mark.line + 1
            node_lines(item, path + (i,), lines, duplicates)


class Checker:
    def __init__(self, layout, display_root):
        self.layout, self.display_root = layout, display_root
        self.errors = []

    def check_file(self, file):
        shown = os.path.relpath(file, self.display_root) if file.startswith(self.display_root + "/") else file
        try:
            with open(file, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            self.errors.append(f"{shown}: cannot read: {e}")
            return
        loader = yaml.SafeLoader(text)
        documents = []
        try:
            while loader.check_node():
                node = loader.get_node()
                lines, duplicates = {(): node.start_mark.line + 1}, []
                node_lines(node, (), lines, duplicates)
                for path, line in duplicates:
                    self.errors.append(f"{shown}:{line}: {path_text(path)}: duplicate key (YAML keeps only the last)")
                documents.append((loader.construct_document(node), lines))
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
            where = f"{shown}:{mark.line + 1}" if mark else shown
            problem = getattr(e, "problem", None) or str(e).splitlines()[0]
            self.errors.append(f"{where}: YAML parse error: {problem}")
            return
        finally:
            loader.dispose()
        if not any(data is not None for data, _ in documents):
            self.errors.append(f"{shown}: no YAML document")
        for data, lines in documents:
            if data is None:
                continue
            if not isinstance(data, dict):
                self.errors.append(f"{shown}:{lines[()]}: document is not a mapping")
                continue
            metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
            label = f"{data.get('kind', '?')}/{metadata.get('name', '?')}"
            Document(self, shown, lines, label).walk(data, ())


class Document:
    def __init__(self, checker, shown, lines, label):
        self.checker, self.layout = checker, checker.layout
        self.shown, self.lines, self.label = shown, lines, label

    def error(self, path, message):
        line = next((self.lines[path[:n]] for n in range(len(path), -1, -1) if path[:n] in self.lines), 0)
        self.checker.errors.append(f"{self.shown}:{line}: {self.label}: {path_text(path)}: {message}")

    def walk(self, value, path):
        if isinstance(value, dict):
            if isinstance(value.get("containers"), list):
                self.pod_spec(value, path)
            for key, item in value.items():
                self.walk(item, path + (key,))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                self.walk(item, path + (i,))

    def pod_spec(self, spec, path):
        volumes = {}
        for i, volume in enumerate(spec.get("volumes") or []):
            if not isinstance(volume, dict):
                continue
            host = volume.get("hostPath")
            if isinstance(host, dict) and isinstance(host.get("path"), str):
                host_path = norm(host["path"])
                role = self.layout.known.get(host_path)
                if role is None and re.search(r"nccltune|nccl-env|nccl-tuner", host_path):
                    near = difflib.get_close_matches(host_path, list(self.layout.known), n=1)
                    hint = f"; did you mean '{near[0]}'?" if near else ""
                    self.error(path + ("volumes", i, "hostPath", "path"),
                               f"'{host_path}' is not where `cmake --install` (prefix {self.layout.prefix}) puts "
                               f"a file nor a path the binaries read{hint}")
                volumes[volume.get("name")] = (host_path, role)
            else:
                volumes[volume.get("name")] = (None, None)
        for kind in ("initContainers", "containers"):
            for i, container in enumerate(spec.get(kind) or []):
                if isinstance(container, dict):
                    Container(self, container, path + (kind, i), volumes).check()


class Container:
    def __init__(self, document, container, path, volumes):
        self.doc, self.layout, self.c, self.path = document, document.layout, container, path
        self.env = {}
        for i, item in enumerate(container.get("env") or []):
            if isinstance(item, dict) and isinstance(item.get("value"), str):
                self.env[item.get("name")] = (item["value"], path + ("env", i, "value"))
        self.mounts = []  # (mountPath, host path or None, role, readOnly, field path)
        for i, mount in enumerate(container.get("volumeMounts") or []):
            if not isinstance(mount, dict):
                continue
            field = path + ("volumeMounts", i)
            if mount.get("name") not in volumes:
                document.error(field + ("name",), f"no volume named '{mount.get('name')}'")
                continue
            host, role = volumes[mount["name"]]
            if host is not None and mount.get("subPath"):
                host = os.path.join(host, mount["subPath"])
                role = self.layout.known.get(norm(host))
            self.mounts.append((norm(str(mount.get("mountPath", ""))), host, role, mount.get("readOnly") is True, field))

    def host_of(self, container_path):
        """The host path a container path comes from through a hostPath mount, else None."""
        container_path = norm(container_path)
        best = None
        for mount_path, host, _, _, _ in self.mounts:
            if host is None:
                continue
            if container_path == mount_path or container_path.startswith(mount_path.rstrip("/") + "/"):
                if best is None or len(mount_path) > len(best[0]):
                    best = (mount_path, host)
        if best is None:
            return None
        return norm(best[1] + container_path[len(best[0]):])

    def check(self):
        invocations = self.invocations()
        names = {name for name, _, _ in invocations}
        flags = {}
        for name, tokens, subcommand in invocations:
            flags.update(self.check_invocation(name, tokens, subcommand))
        if "nccltuned" in names:
            reader, expected = "nccltuned", self.daemon_paths(flags)
        elif names:
            reader, expected = "nccltune env", self.env_command_paths(flags)
        else:
            reader, expected = "the plugin", self.plugin_paths()
        self.check_mounts(reader, expected, "nccltuned" in names)
        self.check_plugin_variables()

    # --- command and args -------------------------------------------------------------------

    def invocations(self):
        """(binary name, [(token, field path)], subcommand) for each nccltune binary it runs."""
        command = [(t, self.path + ("command", i)) for i, t in enumerate(self.c.get("command") or [])]
        args = [(t, self.path + ("args", i)) for i, t in enumerate(self.c.get("args") or [])]
        tokens = [(str(t), p) for t, p in command + args]
        if not tokens:
            return []
        if os.path.basename(tokens[0][0]) in ("sh", "bash", "dash") and any(t == "-c" for t, _ in tokens):
            at = next(i for i, (t, _) in enumerate(tokens) if t == "-c")
            if at + 1 >= len(tokens):
                return []
            script, field = tokens[at + 1]
            try:
                lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
                lexer.whitespace_split = True
                words = list(lexer)
            except ValueError as e:
                self.doc.error(field, f"cannot split the shell script: {e}")
                return []
            tokens = [(w, field) for w in words]
        found = []
        command_position = True  # the first word, and the first after a shell operator
        for i, (token, _) in enumerate(tokens):
            name = os.path.basename(token)
            at_command, command_position = command_position, token in SHELL_OPERATORS
            if at_command and (token in ("exec", "env", "command") or re.match(r"^[A-Za-z_]\w*=", token)):
                command_position = True  # a prefix: the command follows
                continue
            if at_command and name in BINARIES:
                segment = []
                for item in tokens[i:]:
                    if item[0] in SHELL_OPERATORS:
                        break
                    segment.append(item)
                subcommand = None
                if name == "nccltune":
                    subcommands = self.layout.help["nccltune"][1]
                    subcommand = next((t for t, _ in segment[1:] if not t.startswith("-")), None)
                    if subcommand not in subcommands:
                        subcommand = None
                found.append((name, segment, subcommand))
        return found

    def check_invocation(self, name, tokens, subcommand):
        binary, field = tokens[0]
        if binary.startswith("/"):
            host = self.host_of(binary)
            where = host if host is not None else norm(binary)
            if self.layout.known.get(where) != "binary:" + name:
                installed = ", ".join(self.layout.role_paths("binary:" + name))
                self.doc.error(field, f"'{binary}'{' (mounted from ' + host + ')' if host else ''}: "
                                      f"`cmake --install` puts {name} at {installed}")
        known = self.layout.flags_of(name, subcommand)
        shown = name + (" " + subcommand if subcommand else "")
        values = {}
        i = 1
        while i < len(tokens):
            token, token_field = tokens[i]
            if token.startswith("--") and token != "--":
                flag, has_value, value = token.partition("=")
                if flag not in known:
                    self.doc.error(token_field, f"unknown flag '{flag}' for {shown} (not in `{shown} --help`)")
                elif known[flag] and not has_value and i + 1 < len(tokens):
                    value = tokens[i + 1][0]
                    i += 1
                values[flag] = value
            i += 1
        return values

    # --- where each reader looks ------------------------------------------------------------

    def env_value(self, name):
        return self.env[name][0] if name in self.env else None

    def daemon_paths(self, flags):
        config = flags.get("--config") or self.layout.config
        runtime = flags.get("--runtime-dir") or self.layout.runtime_dir
        return {"config-file": (config, "--config, else the compiled-in default"),
                "config-dir": (os.path.dirname(config), "the directory of the config"),
                "store": (self.layout.store, "env.store of the shipped config"),
                "runtime-dir": (runtime, "--runtime-dir, else daemon.runtime_dir"),
                "node-state": (os.path.join(runtime, os.path.basename(self.layout.node_state)), "--runtime-dir"),
                "state-dir": (flags.get("--state-dir") or self.layout.state_dir, "--state-dir, else daemon.state_dir"),
                "metrics-dir": (flags.get("--metrics-dir") or self.layout.metrics_dir,
                                "--metrics-dir, else daemon.metrics_dir")}

    def env_command_paths(self, flags):
        config = flags.get("--config") or self.env_value("NCCLTUNE_CONFIG") or self.layout.config
        node_state = flags.get("--node-state") or self.layout.node_state
        return {"config-file": (config, "--config, else NCCLTUNE_CONFIG, else the compiled-in default"),
                "config-dir": (os.path.dirname(config), "the directory of the config"),
                "store": (flags.get("--profiles") or self.layout.store, "--profiles, else env.store"),
                "node-state": (node_state, "--node-state, else the compiled-in default"),
                "runtime-dir": (os.path.dirname(node_state), "the directory of --node-state")}

    def plugin_paths(self):
        config = self.env_value("NCCLTUNE_CONFIG") or self.layout.config
        paths = {"config-file": (config, "NCCLTUNE_CONFIG, else the compiled-in default"),
                 "config-dir": (os.path.dirname(config), "the directory of the config")}
        if "NCCLTUNE_PROFILE" in self.env:
            return paths  # one profile file: no node.yaml, no store
        node_state = self.env_value("NCCLTUNE_NODE_STATE") or self.layout.node_state
        paths.update({"store": (self.env_value("NCCLTUNE_PROFILES") or self.layout.store,
                                "NCCLTUNE_PROFILES, else env.store"),
                      "node-state": (node_state, "NCCLTUNE_NODE_STATE, else the compiled-in default"),
                      "runtime-dir": (os.path.dirname(node_state),
                                      "the directory of NCCLTUNE_NODE_STATE, else of the compiled-in node.yaml")})
        return paths

    def check_mounts(self, reader, expected, daemon):
        for mount_path, host, role, read_only, field in self.mounts:
            if role is None:
                continue
            if daemon and role in DAEMON_WRITES:
                if read_only:
                    self.doc.error(field + ("readOnly",), f"nccltuned writes {host} ({role}): the mount must be writable")
            elif not read_only:
                self.doc.error(field + ("readOnly",),
                               f"{host} ({role}) is mounted writable: {reader} only reads it; set readOnly: true")
            if role in expected and norm(expected[role][0]) != mount_path:
                path, why = expected[role]
                self.doc.error(field + ("mountPath",), f"{host} ({role}) is mounted at {mount_path}, "
                                                       f"but {reader} reads it at {path} ({why})")
        if daemon:
            for role in ("runtime-dir", "state-dir"):
                if not any(r == role for _, _, r, _, _ in self.mounts):
                    self.doc.error(self.path + ("volumeMounts",),
                                   f"no hostPath mount of {expected[role][0]} ({role}): what nccltuned writes stays in the container")

    def check_plugin_variables(self):
        uses_plugin = False
        for variable, (role, file_name) in PLUGIN_VARIABLES.items():
            mounted = [m for m in self.mounts if m[2] == role]
            if variable not in self.env:
                if mounted:
                    self.doc.error(mounted[0][4], f"mounts {file_name} but sets no {variable}")
                continue
            value, field = self.env[variable]
            if value == "nccltune":
                directories = (self.env_value("LD_LIBRARY_PATH") or "").split(":")
                if not any(d.startswith("/") and self.layout.known.get(self.host_of(os.path.join(d, file_name)) or "") == role
                           for d in directories):
                    self.doc.error(field, f"{variable}=nccltune loads {file_name} from the library path, "
                                          "but no directory of LD_LIBRARY_PATH has it mounted; name the mounted path")
                    continue
            elif "/" in value:
                host = self.host_of(value)
                if host is None:
                    self.doc.error(field, f"'{value}' is not on a hostPath mount of this container")
                    continue
                if self.layout.known.get(host) != role:
                    installed = ", ".join(self.layout.role_paths(role))
                    self.doc.error(field, f"'{value}' is mounted from {host}, not from {installed} where "
                                          f"`cmake --install` puts {file_name}")
                    continue
            else:
                continue  # another plugin, or none
            uses_plugin = True
        checks = {"NCCLTUNE_PROFILES": ("store",), "NCCLTUNE_CONFIG": ("config-file",),
                  "NCCLTUNE_NODE_STATE": ("node-state",), "NCCLTUNE_PROFILE": ("store", "runtime-dir")}
        for variable, roles in checks.items():
            if variable not in self.env:
                continue
            value, field = self.env[variable]
            host = self.host_of(value)
            if host is None or not any(self.under_role(host, role) for role in roles):
                self.doc.error(field, f"'{value}' is not on a hostPath mount of the {' or '.join(roles)}")
        if uses_plugin and "NCCLTUNE_PROFILE" not in self.env:
            expected = self.plugin_paths()
            for role in ("node-state", "store"):
                path, why = expected[role]
                host = self.host_of(path)
                if host is None or not self.under_role(host, role):
                    self.doc.error(self.path + ("volumeMounts",),
                                   f"the plugin reads the {role} at {path} ({why}), which no hostPath mount provides")

    def under_role(self, host, role):
        """Whether a host path is the role's known path or lies in the directory that holds it."""
        if self.layout.known.get(host) == role:
            return True
        directory = {"store": "store", "runtime-dir": "runtime-dir", "node-state": "runtime-dir",
                     "config-file": "config-dir"}.get(role)
        return any(r == directory and host.startswith(p.rstrip("/") + "/") for p, r in self.layout.known.items())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True, help="the repository root")
    parser.add_argument("--build", required=True, help="a build directory with nccltune, nccltuned, nccltune-env")
    parser.add_argument("--prefix", default="/usr", help="the install prefix the manifests assume (default /usr)")
    parser.add_argument("--bad-fixtures", metavar="DIR", help="check each bad-*.yaml in DIR alone; each must fail")
    parser.add_argument("files", nargs="*", help="manifests (default: configs/kubernetes/*.yaml)")
    options = parser.parse_args()
    source, build = os.path.abspath(options.source), os.path.abspath(options.build)

    with tempfile.TemporaryDirectory(prefix="k8s-manifests.") as workdir:
        try:
            layout = Layout(source, build, options.prefix, workdir)
        except SetupError as e:
            print(f"check_kubernetes_manifests: {e}", file=sys.stderr)
            return 1

    if options.bad_fixtures:
        fixtures = sorted(os.path.join(options.bad_fixtures, f) for f in os.listdir(options.bad_fixtures)
                          if f.startswith("bad-") and f.endswith(".yaml"))
        if not fixtures:
            print(f"{options.bad_fixtures}: no bad-*.yaml fixtures", file=sys.stderr)
            return 1
        failures = 0
        for fixture in fixtures:
            with open(fixture, encoding="utf-8") as f:
                expect = re.search(r"^# expect: (.+)$", f.read(), re.MULTILINE)
            checker = Checker(layout, source)
            checker.check_file(os.path.abspath(fixture))
            name = os.path.basename(fixture)
            if not expect:
                print(f"{name}: no '# expect: TEXT' line", file=sys.stderr)
                failures += 1
            elif not any(expect.group(1) in e for e in checker.errors):
                got = "; ".join(checker.errors) or "no error"
                print(f"{name}: not caught: expected an error with '{expect.group(1)}', got: {got}", file=sys.stderr)
                failures += 1
            else:
                print(f"{name}: caught: {next(e for e in checker.errors if expect.group(1) in e)}")
        return 1 if failures else 0

    files = options.files
    if not files:
        directory = os.path.join(source, "configs", "kubernetes")
        files = sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.endswith((".yaml", ".yml")))
        if not files:
            print(f"{directory}: no manifests", file=sys.stderr)
            return 1
    checker = Checker(layout, source)
    for file in files:
        checker.check_file(os.path.abspath(file))
    for error in dict.fromkeys(checker.errors):
        print(error, file=sys.stderr)
    if not checker.errors:
        print(f"{len(files)} manifest(s) agree with the install layout (prefix {layout.prefix}) and --help")
    return 1 if checker.errors else 0


if __name__ == "__main__":
    sys.exit(main())
