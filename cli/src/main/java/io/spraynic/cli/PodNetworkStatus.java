package io.spraynic.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code --ip netstatus:IFACE}: the IPv4 address that Multus recorded for the pod's interface IFACE in its
 * {@code k8s.v1.cni.cncf.io/network-status} annotation, read from the file a downwardAPI volume writes that annotation
 * to ({@code --network-status FILE}). A VF bound to vfio-pci has no kernel interface whose address {@code iface:} could
 * take, but the SR-IOV CNI still runs the network's IPAM and Multus publishes the result there.
 * <p>
 * The kubelet writes a downwardAPI file when it mounts the volume, which can be before Multus has annotated the pod,
 * and refreshes it on its next sync (about a minute), so an interface missing from the file is waited for, up to a
 * bound. The file is the API server's text: at most {@link #MAX_BYTES} are read, and anything but a JSON array of
 * objects is refused.
 */
final class PodNetworkStatus
{
    /** The prefix of an --ip value that names an interface of the pod's network-status annotation. */
    static final String PREFIX = "netstatus:";
    /** The annotation a downwardAPI volume's fieldRef names to write it to the file. */
    static final String ANNOTATION = "k8s.v1.cni.cncf.io/network-status";
    /** Most bytes read: a status of a few networks is a few KiB. */
    static final int MAX_BYTES = 1 << 20;
    private static final long POLL_MILLIS = 250;
    private static final ObjectMapper JSON = new ObjectMapper();

    private PodNetworkStatus()
    {
    }

    /** @return whether {@code ip} is a {@code netstatus:IFACE} reference. */
    static boolean isReference(final String ip)
    {
        return ip.startsWith(PREFIX);
    }

    /**
     * @param ip      {@code netstatus:IFACE}.
     * @param file    the downwardAPI file of the annotation, or null when --network-status was not given.
     * @param timeout seconds to wait for the file to name IFACE.
     * @return IFACE's one IPv4 address.
     * @throws BadOption when there is no file, or it never names IFACE with one IPv4 address within the timeout.
     */
    static String address(final String ip, final Path file, final double timeout) throws InterruptedException
    {
        final String iface = ip.substring(PREFIX.length());
        if (iface.isEmpty())
        {
            throw new BadOption("--ip", ip, "names no interface", "try --ip " + PREFIX + "net1");
        }
        if (null == file)
        {
            throw new BadOption("--ip", ip, "needs --network-status FILE, the downwardAPI file of the pod's " + ANNOTATION +
                " annotation", "try --ip " + ip + " --network-status /etc/podinfo/network-status");
        }
        final long deadline = System.nanoTime() + (long)(timeout * 1e9);
        while (true)
        {
            final Lookup lookup = lookup(file, iface);
            if (null != lookup.address || System.nanoTime() - deadline >= 0)
            {
                if (null == lookup.address)
                {
                    throw new BadOption("--ip", ip, lookup.problem + " after " + timeout + " s",
                        "try --ip " + PREFIX + "NAME with an interface the pod's networks annotation attaches (@NAME), and " +
                        "--network-status a downwardAPI file of metadata.annotations['" + ANNOTATION + "']");
                }
                return lookup.address;
            }
            Thread.sleep(POLL_MILLIS);
        }
    }

    /** What one read of the file found: the address, or why not (the last reason is the one reported). */
    record Lookup(String address, String problem)
    {
    }

    /** @return IFACE's one IPv4 address in the file, or the reason there is none yet. */
    static Lookup lookup(final Path file, final String iface)
    {
        final JsonNode status;
        try (InputStream in = Files.newInputStream(file))
        {
            final byte[] bytes = in.readNBytes(MAX_BYTES + 1);
            if (bytes.length > MAX_BYTES)
            {
                return new Lookup(null, file + " is over " + MAX_BYTES + " bytes");
            }
            final String text = new String(bytes, StandardCharsets.UTF_8);
            if (text.isBlank())
            {
                return new Lookup(null, file + " is empty (Multus has not annotated the pod yet)");
            }
            status = JSON.readTree(text);
        }
        catch (final NoSuchFileException ex)
        {
            return new Lookup(null, "there is no " + file);
        }
        catch (final IOException ex)
        {
            return new Lookup(null, file + " is not JSON: " + ex.getMessage().lines().findFirst().orElse(""));
        }
        if (null == status || !status.isArray())
        {
            return new Lookup(null, file + " is not a JSON array of networks");
        }
        final List<String> interfaces = new ArrayList<>();
        for (final JsonNode network : status)
        {
            final String name = network.path("interface").asText("");
            interfaces.add(name);
            if (!name.equals(iface))
            {
                continue;
            }
            final List<String> ipv4 = new ArrayList<>();
            for (final JsonNode address : network.path("ips"))
            {
                final String text = address.asText("");
                if (isIpv4(text))
                {
                    ipv4.add(text);
                }
            }
            return ipv4.size() == 1 ? new Lookup(ipv4.getFirst(), null) : new Lookup(null, "interface " + iface +
                " has " + ipv4.size() + " IPv4 addresses " + ipv4 + " in " + file + ", not one (is the network's ipam set?)");
        }
        return new Lookup(null, file + " names interfaces " + interfaces + ", not " + iface);
    }

    // dotted quad only: a hostile file must not make InetAddress resolve a name
    private static boolean isIpv4(final String text)
    {
        final String[] octets = text.split("\\.", -1);
        if (octets.length != 4)
        {
            return false;
        }
        for (final String octet : octets)
        {
            if (octet.isEmpty() || octet.length() > 3 || !octet.chars().allMatch(c -> c >= '0' && c <= '9') ||
                Integer.parseInt(octet) > 255)
            {
                return false;
            }
        }
        return true;
    }
}
