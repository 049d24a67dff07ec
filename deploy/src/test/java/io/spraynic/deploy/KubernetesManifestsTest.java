package io.spraynic.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ExecAction;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.spraynic.cli.SprayNic;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PmdConfigs;
import io.spraynic.pmd.PortKind;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * deploy/kubernetes: every overlay rendered by {@code kubectl kustomize} (v5 here, Debian's v2 on a fresh CI machine;
 * {@code -Dspraynic.kubectl=PATH} renders with a second one too),
 * every document parsed by the fabric8 Kubernetes model, and what a fleet depends on checked against the rest of the
 * project: the image is the one deploy/container builds; the NIC container has the capabilities of the podman runner
 * and the systemd unit and no more, no privilege, a read-only root; hugepages, the IPC directory and the config are
 * mounted where its arguments say; requests equal limits; the probes run real {@code spraynic} commands that parse;
 * the PodDisruptionBudget selects the DaemonSet's pods; one NetworkAttachmentDefinition per plane, as many as the
 * TOML config's ports and the NIC's addresses; the application pod reaches the same IPC directory as the same user.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class KubernetesManifestsTest
{
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks";
    private static final String RESOURCE_ANNOTATION = "k8s.v1.cni.cncf.io/resourceName";
    private static final String NETWORK_STATUS_ANNOTATION = "k8s.v1.cni.cncf.io/network-status";
    /** VFs bound to vfio-pci: DPDK pins the DMA memory (RLIMIT_MEMLOCK); no socket, so no NET_RAW or NET_ADMIN. */
    private static final Set<String> VFIO_CAPABILITIES = Set.of("IPC_LOCK");

    @TempDir
    Path temp;

    @Test
    void shouldRenderEveryOverlayIntoManifestsAFleetCanRun() throws Exception
    {
        final List<Path> overlays;
        try (Stream<Path> dirs = Files.list(DeployFiles.KUBERNETES.resolve("overlays")))
        {
            overlays = dirs.filter(Files::isDirectory).sorted().toList();
        }
        assertFalse(overlays.isEmpty());
        final Path dashboard = DeployFiles.REPO.resolve("deploy/grafana/spraynic-dashboard.json");
        assertTrue(Files.isRegularFile(dashboard) && Files.readString(DeployFiles.KUBERNETES.resolve("README.md"))
            .contains(DeployFiles.REPO.relativize(dashboard).toString()), "the manifests' README names the Grafana dashboard");
        for (final Path kubectl : kubectls())
        {
            for (final Path overlay : overlays)
            {
                final List<String> problems = problems(render(kubectl, overlay));
                assertEquals(List.of(), problems, overlay + " rendered by " + kubectl + " into manifests with problems");
            }
        }
    }

    @Test
    void shouldNoticeWhatMatters() throws Exception
    {
        final String rendered = render(kubectls().getFirst(), DeployFiles.KUBERNETES.resolve("overlays/example"));
        assertEquals(List.of(), problems(rendered));
        // each change a careless edit could make is caught, or the checks above prove nothing
        final List<Map.Entry<String, String>> breakages = List.of( // a key may break twice: not a Map
            Map.entry("            - NET_RAW\n            - NET_ADMIN\n",
                "            - NET_RAW\n            - NET_ADMIN\n            - SYS_ADMIN\n"),
            Map.entry("privileged: false\n          readOnlyRootFilesystem: true\n        startupProbe",
                "privileged: false\n          readOnlyRootFilesystem: false\n        startupProbe"),
            // the NIC as a user whose added capabilities containerd and CRI-O leave in the bounding set, or serving
            // no group, or a group the application does not run in
            Map.entry("        runAsGroup: 10001\n        runAsNonRoot: false\n        runAsUser: 0\n",
                "        runAsGroup: 10001\n        runAsNonRoot: true\n        runAsUser: 10001\n"),
            Map.entry("        - --ipc-group\n        - spraynic\n", ""),
            Map.entry("        - --ipc-group\n        - spraynic\n", "        - --ipc-group\n        - root\n"),
            Map.entry("    runAsGroup: 10001\n    runAsNonRoot: true\n    runAsUser: 10001\n",
                "    runAsGroup: 20002\n    runAsNonRoot: true\n    runAsUser: 10001\n"),
            Map.entry("allowPrivilegeEscalation: false\n          capabilities:\n            add:\n            - NET_RAW",
                "allowPrivilegeEscalation: true\n          capabilities:\n            add:\n            - NET_RAW"),
            Map.entry("image: localhost/spraynic:" + DeployFiles.version(), "image: docker.io/other:latest"),
            Map.entry("hugepages-2Mi: 1Gi\n            memory: 1Gi\n          requests:",
                "hugepages-2Mi: 2Gi\n            memory: 1Gi\n          requests:"),
            Map.entry("- --max-age", "- --max-ages"),
            Map.entry("spraynic-plane0@net1, spraynic-plane1@net2", "spraynic-plane0@net1"),
            Map.entry("  maxUnavailable: 1\n  selector:\n    matchLabels:\n      app.kubernetes.io/component: nic",
                "  maxUnavailable: 1\n  selector:\n    matchLabels:\n      app.kubernetes.io/component: other"),
            Map.entry("mountPath: /dev/hugepages", "mountPath: /mnt/huge"),
            Map.entry("path: /run/spraynic/ipc\n          type: DirectoryOrCreate", "path: /run/other\n          type: DirectoryOrCreate"),
            // metrics open to every pod, or another port opened
            Map.entry("  - from:\n    - namespaceSelector:\n        matchLabels:\n          spraynic.io/scrape-metrics: \"true\"\n    ports:",
                "  - ports:"),
            Map.entry("    - namespaceSelector:\n        matchLabels:\n          spraynic.io/scrape-metrics: \"true\"\n",
                "    - namespaceSelector: {}\n"),
            Map.entry("    - port: 9464\n      protocol: TCP\n  podSelector", "    - port: 22\n      protocol: TCP\n  podSelector"));
        for (final Map.Entry<String, String> breakage : breakages)
        {
            assertTrue(rendered.contains(breakage.getKey()), "the rendered manifests hold: " + breakage.getKey());
            assertFalse(problems(rendered.replace(breakage.getKey(), breakage.getValue())).isEmpty(),
                "not noticed: " + breakage.getValue());
        }
    }

    @Test
    void shouldNoticeAnSriovNetworkWithoutItsDevice() throws Exception
    {
        final String rendered = render(kubectls().getFirst(), DeployFiles.KUBERNETES.resolve("overlays/sriov"));
        assertEquals(List.of(), problems(rendered));
        assertTrue(rendered.contains("\"type\": \"sriov\""), "the sriov overlay's networks are SR-IOV networks");
        final Map<String, String> breakages = Map.ofEntries(
            // the NIC's pod asks for no VF of plane 1 (Multus could not attach it), or for two of plane 0
            Map.entry("            intel.com/spraynic_plane1: \"1\"\n", ""),
            Map.entry("intel.com/spraynic_plane0: \"1\"", "intel.com/spraynic_plane0: \"2\""),
            Map.entry("k8s.v1.cni.cncf.io/resourceName: intel.com/spraynic_plane1", "k8s.v1.cni.cncf.io/resourceName: intel.com/other"),
            Map.entry("    k8s.v1.cni.cncf.io/resourceName: intel.com/spraynic_plane0\n", ""));
        for (final Map.Entry<String, String> breakage : breakages.entrySet())
        {
            assertTrue(rendered.contains(breakage.getKey()), "the rendered manifests hold: " + breakage.getKey());
            assertFalse(problems(rendered.replace(breakage.getKey(), breakage.getValue())).isEmpty(),
                "not noticed: " + breakage.getValue());
        }
    }

    @Test
    void shouldNoticeAVfioNicWithoutWhatItNeedsOrWithMore() throws Exception
    {
        final String rendered = render(kubectls().getFirst(), DeployFiles.KUBERNETES.resolve("overlays/sriov-vfio"));
        assertEquals(List.of(), problems(rendered));
        assertTrue(rendered.contains("kind = \"pci\""), "the sriov-vfio overlay's ports are PCI ports");
        final List<Map.Entry<String, String>> breakages = List.of( // a key may break twice: not a Map
            // a capability more than vfio needs, or none for the pinned memory
            Map.entry("            - IPC_LOCK\n", "            - IPC_LOCK\n            - NET_ADMIN\n"),
            Map.entry("            - IPC_LOCK\n", "            - SYS_ADMIN\n"),
            // both planes on one VF's variable, or a variable the device plugin does not set
            Map.entry("plane1_pci=PCIDEVICE_INTEL_COM_SPRAYNIC_PLANE1", "plane1_pci=PCIDEVICE_INTEL_COM_SPRAYNIC_PLANE0"),
            Map.entry("plane0_pci=PCIDEVICE_INTEL_COM_SPRAYNIC_PLANE0", "plane0_pci=PCIDEVICE_SPRAYNIC_PLANE0"),
            // the planes' addresses swapped, or from a kernel interface a vfio VF does not have
            Map.entry("netstatus:net1,netstatus:net2", "netstatus:net2,netstatus:net1"),
            Map.entry("netstatus:net1,netstatus:net2", "iface:net1,iface:net2"),
            Map.entry("metadata.annotations['k8s.v1.cni.cncf.io/network-status']", "metadata.annotations['k8s.v1.cni.cncf.io/networks']"),
            Map.entry("- /etc/podinfo/network-status", "- /etc/other/network-status"),
            // physical addresses need CAP_SYS_ADMIN (pagemap); /dev/vfio from the node instead of the device plugin
            Map.entry("iova_mode = \"va\"", "iova_mode = \"pa\""),
            Map.entry("      - downwardAPI:", "      - hostPath:\n          path: /dev/vfio\n        name: vfio\n      - downwardAPI:"));
        for (final Map.Entry<String, String> breakage : breakages)
        {
            assertTrue(rendered.contains(breakage.getKey()), "the rendered manifests hold: " + breakage.getKey());
            assertFalse(problems(rendered.replace(breakage.getKey(), breakage.getValue())).isEmpty(),
                "not noticed: " + breakage.getValue());
        }
    }

    /** @return kubectl on PATH, and the one -Dspraynic.kubectl names (e.g. Debian's, extracted beside another). */
    private static List<Path> kubectls()
    {
        final List<Path> kubectls = new ArrayList<>();
        final Path onPath = DeployFiles.onPath("kubectl");
        if (null != onPath)
        {
            kubectls.add(onPath);
        }
        final String extra = System.getProperty("spraynic.kubectl");
        if (null != extra && !extra.isBlank())
        {
            assertTrue(Files.isExecutable(Path.of(extra)), "-Dspraynic.kubectl=" + extra + " is not an executable");
            kubectls.add(Path.of(extra));
        }
        if (kubectls.isEmpty())
        {
            // CI installs Debian's kubernetes-client (deploy/setup-env.sh); elsewhere, say so rather than pass
            assertNull(System.getenv("CI"), "kubectl is not installed: apt-get install kubernetes-client");
            Assumptions.abort("kubectl not installed (apt-get install kubernetes-client): manifests not rendered");
        }
        return kubectls;
    }

    private static String render(final Path kubectl, final Path overlay) throws Exception
    {
        final DeployFiles.Result result = DeployFiles.run(60, kubectl.toString(), "kustomize", overlay.toString());
        assertEquals(0, result.exitCode(), result.err());
        return result.out();
    }

    /** @return every problem of the rendered manifests, one sentence each. */
    private List<String> problems(final String rendered) throws Exception
    {
        final List<String> problems = new ArrayList<>();
        final List<HasMetadata> resources = new ArrayList<>();
        for (final String document : rendered.split("(?m)^---\\s*$"))
        {
            if (!document.isBlank())
            {
                resources.add(SERIALIZATION.unmarshal(document));
            }
        }
        final List<DaemonSet> daemonSets = ofKind(resources, DaemonSet.class);
        final List<ConfigMap> configMaps = ofKind(resources, ConfigMap.class);
        final List<PodDisruptionBudget> budgets = ofKind(resources, PodDisruptionBudget.class);
        final List<ServiceAccount> accounts = ofKind(resources, ServiceAccount.class);
        final List<Pod> pods = ofKind(resources, Pod.class);
        final List<GenericKubernetesResource> networks = ofKind(resources, GenericKubernetesResource.class).stream()
            .filter(resource -> resource.getKind().equals("NetworkAttachmentDefinition")).toList();
        if (daemonSets.size() != 1 || configMaps.size() != 1 || budgets.size() != 1 || accounts.size() != 1 || pods.isEmpty())
        {
            problems.add("expected one DaemonSet, ConfigMap, PodDisruptionBudget and ServiceAccount and an application pod: " +
                resources.stream().map(HasMetadata::getKind).toList());
            return problems;
        }
        final DaemonSet daemonSet = daemonSets.getFirst();
        final PodSpec spec = daemonSet.getSpec().getTemplate().getSpec();
        final Container nic = spec.getContainers().stream().filter(c -> c.getName().equals("nic")).findFirst().orElse(null);
        if (null == nic || spec.getContainers().size() != 1)
        {
            problems.add("the DaemonSet's pod runs one container, nic: " + spec.getContainers());
            return problems;
        }
        final CommandLine.ParseResult nicArgs = parse(problems, "the nic container's args", nic.getArgs());
        if (null == nicArgs)
        {
            return problems;
        }

        // one image, the one deploy/container builds; the entrypoint is the image's
        final String image = DeployFiles.image();
        final List<Container> all = new ArrayList<>();
        all.addAll(spec.getInitContainers());
        all.addAll(spec.getContainers());
        pods.forEach(pod -> all.addAll(pod.getSpec().getContainers()));
        for (final Container container : all)
        {
            check(problems, image.equals(container.getImage()), container.getName() + ": image " + container.getImage() +
                ", not " + image + " (deploy/container/build-image.sh)");
            check(problems, container.getCommand().isEmpty() || container.getName().equals("ipc-dir"),
                container.getName() + ": overrides the image's entrypoint");
        }

        // the config, its PCI addresses (a vfio profile's) filled as the device plugin's variables would fill them
        final Path configPath = Path.of(option(nicArgs, "--config"));
        final ConfigMap configMap = configMaps.getFirst();
        final String toml = configMap.getData().get(configPath.getFileName().toString());
        check(problems, null != toml, "the ConfigMap holds " + configPath.getFileName());
        final Map<String, String> fromEnv = new java.util.TreeMap<>();
        final Map<String, String> params = new java.util.TreeMap<>();
        final CommandLine.Model.OptionSpec paramFromEnv = nicArgs.subcommand().matchedOption("--param-from-env");
        if (null != paramFromEnv)
        {
            ((Map<?, ?>)paramFromEnv.getValue()).forEach((name, variable) ->
            {
                fromEnv.put(String.valueOf(variable), String.format("0000:%02x:00.0", fromEnv.size() + 1));
                params.put(String.valueOf(name), fromEnv.get(String.valueOf(variable)));
            });
        }
        final Path tomlFile = temp.resolve("nic-" + System.nanoTime() + ".toml");
        Files.writeString(tomlFile, null == toml ? "" : toml);
        final NicConfig config;
        try
        {
            config = PmdConfigs.file(tomlFile, params);
        }
        catch (final RuntimeException ex)
        {
            problems.add("the ConfigMap's " + configPath.getFileName() + " with --param-from-env " + params + ": " + ex.getMessage());
            return problems;
        }
        final boolean vfio = config.ports().stream().anyMatch(port -> port.kind() == PortKind.PCI);

        // security: the NIC's two capabilities (IPC_LOCK alone for VFs on vfio-pci) and nothing else; nobody
        // privileged, escalating or writing its root
        final Set<String> nicCapabilities = vfio ? VFIO_CAPABILITIES : DeployFiles.NIC_CAPABILITIES;
        check(problems, DeployFiles.runScriptCapabilities().equals(DeployFiles.NIC_CAPABILITIES) &&
            DeployFiles.systemdCapabilities().equals(DeployFiles.NIC_CAPABILITIES),
            "deploy/container/run.sh and the systemd unit grant " + DeployFiles.NIC_CAPABILITIES);
        checkSecurity(problems, "nic", nic.getSecurityContext(), spec.getSecurityContext(), nicCapabilities, false);
        for (final Container init : spec.getInitContainers())
        {
            checkSecurity(problems, init.getName(), init.getSecurityContext(), spec.getSecurityContext(), Set.of("CHOWN"), false);
        }
        for (final Pod pod : pods)
        {
            for (final Container container : pod.getSpec().getContainers())
            {
                checkSecurity(problems, pod.getMetadata().getName(), container.getSecurityContext(),
                    pod.getSpec().getSecurityContext(), Set.of(), true);
            }
        }
        check(problems, !Boolean.TRUE.equals(spec.getHostNetwork()) && !Boolean.TRUE.equals(spec.getHostPID()) &&
            !Boolean.TRUE.equals(spec.getHostIPC()), "the NIC's pod shares no host namespace");
        // root, so that its two capabilities are effective on containerd and CRI-O (for another user they stay in the
        // bounding set); it then serves the members of one group of the image, and applications run as that group
        check(problems, null == nic.getSecurityContext().getRunAsUser() &&
            Objects.equals(spec.getSecurityContext().getRunAsUser(), 0L), "the NIC runs as root (runAsUser 0 in the pod)");
        final String ipcGroup = option(nicArgs, "--ipc-group");
        final long ipcGroupId = null == ipcGroup ? -1 : DeployFiles.imageGroupId(ipcGroup);
        check(problems, ipcGroupId > 0, "the NIC serves --ipc-group, a group of the image (not root's): " + ipcGroup);

        // volumes where the arguments look for them
        final String ipcDir = option(nicArgs, "--ipc-dir");
        final Volume ipcVolume = mounted(problems, spec, nic, ipcDir);
        check(problems, null != ipcVolume && null != ipcVolume.getHostPath(), "the IPC directory " + ipcDir + " is a hostPath");
        check(problems, env(nic, "SPRAYNIC_IPC_DIR").equals(ipcDir), "SPRAYNIC_IPC_DIR is --ipc-dir " + ipcDir);
        final Volume hugepages = mounted(problems, spec, nic, "/dev/hugepages");
        check(problems, null != hugepages && null != hugepages.getEmptyDir() &&
            "HugePages".equals(hugepages.getEmptyDir().getMedium()), "/dev/hugepages is an emptyDir of medium HugePages");
        final Volume configVolume = mounted(problems, spec, nic, configPath.getParent().toString());
        check(problems, null != configVolume && null != configVolume.getConfigMap() &&
            configMap.getMetadata().getName().equals(configVolume.getConfigMap().getName()),
            "the config volume is the ConfigMap " + configMap.getMetadata().getName());
        check(problems, !config.eal().noHuge() && "/dev/hugepages".equals(config.eal().hugeDir()),
            "the config runs from the hugepages mounted at /dev/hugepages");
        check(problems, spec.getVolumes().stream().filter(v -> null != v.getHostPath()).count() == 1,
            "the IPC directory is the one hostPath");
        check(problems, env(nic, "SPRAYNIC_RUN_DIR").startsWith("/dev/shm") && null != mounted(problems, spec, nic, "/dev/shm") &&
            null != mounted(problems, spec, nic, "/tmp"), "the counters (/dev/shm) and /tmp are writable volumes");

        // resources: guaranteed QoS, hugepages enough for the config's memory
        for (final Container container : Stream.concat(spec.getInitContainers().stream(), spec.getContainers().stream()).toList())
        {
            final Map<String, Quantity> requests = container.getResources().getRequests();
            final Map<String, Quantity> limits = container.getResources().getLimits();
            check(problems, null != requests && requests.equals(limits) && requests.containsKey("cpu") &&
                requests.containsKey("memory"), container.getName() + ": cpu and memory requests equal the limits: " +
                requests + " " + limits);
        }
        final Quantity huge = nic.getResources().getLimits().get("hugepages-2Mi");
        check(problems, null != huge && Quantity.getAmountInBytes(huge).longValue() >= config.eal().memoryMb() * (1L << 20),
            "hugepages-2Mi " + huge + " hold the config's memory_mb " + config.eal().memoryMb());

        // probes: the image's spraynic, health, the NIC's own directories
        final String entrypoint = DeployFiles.entrypoint();
        final CommandLine.ParseResult liveness = probe(problems, "livenessProbe", nic.getLivenessProbe(), entrypoint);
        final CommandLine.ParseResult readiness = probe(problems, "readinessProbe", nic.getReadinessProbe(), entrypoint);
        final CommandLine.ParseResult startup = probe(problems, "startupProbe", nic.getStartupProbe(), entrypoint);
        for (final CommandLine.ParseResult probe : new CommandLine.ParseResult[] {liveness, readiness, startup})
        {
            check(problems, null != probe && ipcDir.equals(option(probe, "--ipc-dir")), "each probe asks --ipc-dir " + ipcDir);
        }
        check(problems, null != liveness && !liveness.hasMatchedOption("--ready") && null != readiness &&
            readiness.hasMatchedOption("--ready") && env(nic, "SPRAYNIC_RUN_DIR").equals(option(readiness, "--dir")),
            "liveness asks for the heartbeat, readiness for started ports in SPRAYNIC_RUN_DIR");

        // planes: one network per port and address
        final String annotation = daemonSet.getSpec().getTemplate().getMetadata().getAnnotations().getOrDefault(NETWORKS_ANNOTATION, "");
        final List<String> attached = new ArrayList<>();
        for (final String network : annotation.split(","))
        {
            if (!network.isBlank())
            {
                attached.add(network.strip().replaceFirst("@.*", ""));
            }
        }
        final Set<String> defined = new TreeSet<>();
        final Set<String> deviceResources = new TreeSet<>();
        for (final GenericKubernetesResource network : networks)
        {
            final String name = network.getMetadata().getName();
            final JsonNode cni = JSON.readTree(String.valueOf(((Map<?, ?>)network.getAdditionalProperties().get("spec")).get("config")));
            check(problems, name.equals(cni.path("name").asText()) && cni.hasNonNull("type"),
                name + ": CNI config names it and a plugin type");
            defined.add(name);
            // an SR-IOV network hands the pod the VF the device plugin allocated from the annotated resource
            final String resource = null == network.getMetadata().getAnnotations() ? null :
                network.getMetadata().getAnnotations().get(RESOURCE_ANNOTATION);
            check(problems, "sriov".equals(cni.path("type").asText()) == (null != resource),
                name + ": an sriov network names its device plugin resource (" + RESOURCE_ANNOTATION + "), and only it");
            if (null != resource)
            {
                deviceResources.add(resource);
            }
        }
        // one device (VF) of each plane's resource, asked for and limited alike; no other extended resource
        final Map<String, Quantity> nicRequests = nic.getResources().getRequests();
        final Map<String, Quantity> nicLimits = nic.getResources().getLimits();
        final Set<String> extended = new TreeSet<>(nicLimits.keySet());
        extended.removeIf(resource -> !resource.contains("/"));
        check(problems, extended.equals(deviceResources), "the NIC asks for exactly its networks' device resources " +
            deviceResources + ", not " + extended);
        for (final String resource : deviceResources)
        {
            check(problems, new Quantity("1").equals(nicRequests.get(resource)) && new Quantity("1").equals(nicLimits.get(resource)),
                "one " + resource + " requested and limited: " + nicRequests.get(resource) + " / " + nicLimits.get(resource));
        }
        final List<String> addresses = List.of(option(nicArgs, "--ip").split(","));
        check(problems, attached.size() == config.ports().size() && addresses.size() == config.ports().size() &&
            new TreeSet<>(attached).equals(defined), "one network per plane: " + attached + " attached, " + defined +
            " defined, " + config.ports().size() + " ports, --ip " + addresses);
        if (vfio)
        {
            checkVfio(problems, spec, nic, nicArgs, config, annotation, deviceResources, fromEnv);
        }

        // metrics where Prometheus is told to scrape
        final Map<String, String> annotations = daemonSet.getSpec().getTemplate().getMetadata().getAnnotations();
        final String metricsPort = option(nicArgs, "--metrics").replaceFirst(".*:", "");
        check(problems, metricsPort.equals(annotations.get("prometheus.io/port")) && "true".equals(annotations.get("prometheus.io/scrape")) &&
            nic.getPorts().stream().anyMatch(p -> metricsPort.equals(String.valueOf(p.getContainerPort()))),
            "Prometheus scrapes --metrics' port " + metricsPort);
        // and only Prometheus: the endpoint has no authentication, so a NetworkPolicy lets in what names a source
        // (not every pod of the cluster) on that port, and nothing else
        final List<NetworkPolicy> policies = ofKind(resources, NetworkPolicy.class);
        final Map<String, String> nicPodLabels = daemonSet.getSpec().getTemplate().getMetadata().getLabels();
        final List<NetworkPolicy> nicPolicies = policies.stream().filter(policy -> null != policy.getSpec().getPodSelector()
            .getMatchLabels() && nicPodLabels.entrySet().containsAll(policy.getSpec().getPodSelector().getMatchLabels()
            .entrySet())).toList();
        check(problems, nicPolicies.size() == 1, "one NetworkPolicy selects the NIC's pods: " + policies.size() + " in all");
        for (final NetworkPolicy policy : nicPolicies)
        {
            check(problems, policy.getSpec().getPolicyTypes().contains("Ingress"), "the NIC's NetworkPolicy governs ingress");
            for (final NetworkPolicyIngressRule rule : policy.getSpec().getIngress())
            {
                check(problems, !rule.getFrom().isEmpty() && rule.getFrom().stream().allMatch(peer ->
                    null == peer.getIpBlock() && (null != peer.getNamespaceSelector() || null != peer.getPodSelector()) &&
                    (null == peer.getNamespaceSelector() || (null != peer.getNamespaceSelector().getMatchLabels() &&
                    !peer.getNamespaceSelector().getMatchLabels().isEmpty()))),
                    "the NIC's NetworkPolicy names whom it lets in, not everyone: " + rule.getFrom());
                check(problems, !rule.getPorts().isEmpty() && rule.getPorts().stream().allMatch(port -> null != port.getPort() &&
                    metricsPort.equals(String.valueOf(port.getPort().getIntVal()))),
                    "the NIC's NetworkPolicy lets in --metrics' port " + metricsPort + " only: " + rule.getPorts());
            }
        }

        // disruption budget and account
        final Map<String, String> podLabels = daemonSet.getSpec().getTemplate().getMetadata().getLabels();
        final Map<String, String> budgetSelects = budgets.getFirst().getSpec().getSelector().getMatchLabels();
        check(problems, null != budgetSelects && !budgetSelects.isEmpty() && podLabels.entrySet().containsAll(budgetSelects.entrySet()) &&
            budgetSelects.equals(daemonSet.getSpec().getSelector().getMatchLabels()),
            "the PodDisruptionBudget selects the DaemonSet's pods: " + budgetSelects);
        check(problems, Objects.equals(budgets.getFirst().getSpec().getMaxUnavailable().getIntVal(), 1),
            "one node's NIC down at a time");
        check(problems, accounts.getFirst().getMetadata().getName().equals(spec.getServiceAccountName()) &&
            Boolean.FALSE.equals(accounts.getFirst().getAutomountServiceAccountToken()) &&
            Boolean.FALSE.equals(spec.getAutomountServiceAccountToken()), "the NIC's own account, no API token");

        // the application reaches the same directory as the same user
        for (final Pod pod : pods)
        {
            final Container app = pod.getSpec().getContainers().getFirst();
            final CommandLine.ParseResult appArgs = parse(problems, pod.getMetadata().getName() + "'s args", app.getArgs());
            final String appIpc = null == appArgs ? null : option(appArgs, "--ipc-dir");
            final Volume appVolume = null == appIpc ? null : mounted(problems, pod.getSpec(), app, appIpc);
            check(problems, null != appVolume && null != appVolume.getHostPath() &&
                appVolume.getHostPath().getPath().equals(ipcVolume.getHostPath().getPath()),
                pod.getMetadata().getName() + ": the NIC's IPC directory");
            final PodSecurityContext appSecurity = pod.getSpec().getSecurityContext();
            check(problems, null != appSecurity && ipcGroupId > 0 && (Objects.equals(appSecurity.getRunAsGroup(), ipcGroupId) ||
                null != appSecurity.getSupplementalGroups() && appSecurity.getSupplementalGroups().contains(ipcGroupId)),
                pod.getMetadata().getName() + ": runs in the NIC's --ipc-group " + ipcGroup + " (" + ipcGroupId + ")");
            check(problems, null != appSecurity && Objects.equals(appSecurity.getRunAsUser(), DeployFiles.imageUser()),
                pod.getMetadata().getName() + ": runs as the image's user " + DeployFiles.imageUser());
        }
        return problems;
    }

    /**
     * VFs bound to vfio-pci: every port a PCI port on the VF of one plane's device resource, its address from that
     * resource's variable of the device plugin; the planes' addresses from Multus' network-status annotation, in
     * the annotation's order, through a downwardAPI file; IOVA as virtual addresses (no pagemap, no CAP_SYS_ADMIN).
     */
    private static void checkVfio(final List<String> problems, final PodSpec spec, final Container nic,
        final CommandLine.ParseResult nicArgs, final NicConfig config, final String annotation,
        final Set<String> deviceResources, final Map<String, String> addressOfVariable)
    {
        final List<String> devices = config.ports().stream().map(port -> port.kind() == PortKind.PCI ? port.device() : "")
            .sorted().toList();
        final List<String> expected = deviceResources.stream()
            .map(resource -> addressOfVariable.getOrDefault(devicePluginVariable(resource), "(none)")).sorted().toList();
        check(problems, devices.equals(expected), "each port is the VF of one plane's resource " + deviceResources +
            " (--param-from-env NAME=PCIDEVICE_...): ports on " + devices + ", variables " + addressOfVariable.keySet());
        check(problems, "va".equals(config.eal().iovaMode()), "vfio with IOVA as virtual addresses (iova_mode = \"va\")");
        final List<String> interfaces = new ArrayList<>();
        for (final String network : annotation.split(","))
        {
            interfaces.add("netstatus:" + network.strip().replaceFirst(".*@", ""));
        }
        check(problems, interfaces.equals(List.of(option(nicArgs, "--ip").split(","))),
            "--ip takes each plane's address from the network-status of " + interfaces + ": " + option(nicArgs, "--ip"));
        final Path statusFile = Path.of(option(nicArgs, "--network-status"));
        final Volume podinfo = null == statusFile.getParent() ? null :
            mounted(problems, spec, nic, statusFile.getParent().toString());
        check(problems, null != podinfo && null != podinfo.getDownwardAPI() && podinfo.getDownwardAPI().getItems().stream()
            .anyMatch(item -> item.getPath().equals(statusFile.getFileName().toString()) && null != item.getFieldRef() &&
                ("metadata.annotations['" + NETWORK_STATUS_ANNOTATION + "']").equals(item.getFieldRef().getFieldPath())),
            "--network-status " + statusFile + " is a downwardAPI file of the annotation " + NETWORK_STATUS_ANNOTATION);
    }

    /** @return the variable the SR-IOV network device plugin names a resource's PCI addresses in. */
    private static String devicePluginVariable(final String resource)
    {
        return "PCIDEVICE_" + resource.toUpperCase(java.util.Locale.ROOT).replace('.', '_').replace('/', '_');
    }

    private static void checkSecurity(final List<String> problems, final String name, final SecurityContext container,
        final PodSecurityContext pod, final Set<String> capabilities, final boolean nonRoot)
    {
        if (null == container || null == container.getCapabilities())
        {
            problems.add(name + ": no securityContext with capabilities");
            return;
        }
        check(problems, new HashSet<>(container.getCapabilities().getAdd()).equals(capabilities) &&
            container.getCapabilities().getAdd().size() == capabilities.size(),
            name + ": adds exactly " + capabilities + ", not " + container.getCapabilities().getAdd());
        check(problems, List.of("ALL").equals(container.getCapabilities().getDrop()), name + ": drops ALL first");
        check(problems, !Boolean.TRUE.equals(container.getPrivileged()), name + ": not privileged");
        check(problems, Boolean.FALSE.equals(container.getAllowPrivilegeEscalation()), name + ": no privilege escalation");
        check(problems, Boolean.TRUE.equals(container.getReadOnlyRootFilesystem()), name + ": read-only root file system");
        if (nonRoot)
        {
            check(problems, Boolean.TRUE.equals(container.getRunAsNonRoot()) ||
                (null == container.getRunAsNonRoot() && null != pod && Boolean.TRUE.equals(pod.getRunAsNonRoot())),
                name + ": runAsNonRoot");
            check(problems, null == container.getRunAsUser() || container.getRunAsUser() != 0, name + ": not root");
        }
        check(problems, null != pod && null != pod.getSeccompProfile() && "RuntimeDefault".equals(pod.getSeccompProfile().getType()),
            name + ": the runtime's default seccomp profile");
    }

    private static CommandLine.ParseResult probe(final List<String> problems, final String name, final Probe probe,
        final String entrypoint)
    {
        final ExecAction exec = null == probe ? null : probe.getExec();
        if (null == exec || exec.getCommand().isEmpty() || !entrypoint.equals(exec.getCommand().getFirst()))
        {
            problems.add(name + ": an exec probe running " + entrypoint);
            return null;
        }
        final CommandLine.ParseResult parsed = parse(problems, name, exec.getCommand().subList(1, exec.getCommand().size()));
        check(problems, null != parsed && parsed.subcommand().commandSpec().name().equals("health"), name + ": spraynic health");
        return null == parsed ? null : parsed.subcommand();
    }

    /** @return the arguments parsed by the spraynic CLI itself (its options, its subcommand's), or null with a problem. */
    private static CommandLine.ParseResult parse(final List<String> problems, final String what, final List<String> args)
    {
        try
        {
            final CommandLine.ParseResult result = new CommandLine(new SprayNic()).parseArgs(args.toArray(String[]::new));
            if (!result.hasSubcommand())
            {
                problems.add(what + ": no spraynic command: " + args);
                return null;
            }
            return result;
        }
        catch (final CommandLine.ParameterException ex)
        {
            problems.add(what + ": spraynic refuses " + args + ": " + ex.getMessage());
            return null;
        }
    }

    private static String option(final CommandLine.ParseResult parsed, final String name)
    {
        final CommandLine.ParseResult command = parsed.hasSubcommand() ? parsed.subcommand() : parsed;
        final CommandLine.Model.OptionSpec option = command.matchedOption(name);
        if (null == option)
        {
            return "";
        }
        final Object value = option.getValue();
        return value instanceof List<?> list ? String.join(",", list.stream().map(String::valueOf).toList()) : String.valueOf(value);
    }

    private static Volume mounted(final List<String> problems, final PodSpec spec, final Container container, final String path)
    {
        final VolumeMount mount = container.getVolumeMounts().stream().filter(m -> m.getMountPath().equals(path)).findFirst()
            .orElse(null);
        final Volume volume = null == mount ? null :
            spec.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst().orElse(null);
        check(problems, null != volume, container.getName() + ": a volume at " + path);
        return volume;
    }

    private static String env(final Container container, final String name)
    {
        return container.getEnv().stream().filter(e -> e.getName().equals(name)).map(e -> String.valueOf(e.getValue()))
            .findFirst().orElse("");
    }

    private static <T> List<T> ofKind(final List<HasMetadata> resources, final Class<T> type)
    {
        return resources.stream().filter(type::isInstance).map(type::cast).toList();
    }

    private static void check(final List<String> problems, final boolean ok, final String what)
    {
        if (!ok)
        {
            problems.add(what);
        }
    }
}
