package io.spraynic.cli;

import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.pmd.InterfaceAddress;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;

import java.util.List;

/**
 * The NIC's address on each plane as {@code spraynic nic} and {@code spraynic transfer} take it: {@code --ip} with one
 * {@code A.B.C.D[/N]} or IPv6 {@code X:X::X[/N]} per plane and {@code --gateway} with one router per plane ({@code none} for a plane without),
 * both comma-separated; where {@code --ip} is left out, the {@code ip} and {@code gateway} keys of each
 * {@code [[port]]} of the TOML config.
 */
final class PlaneAddresses
{
    private PlaneAddresses()
    {
    }

    /**
     * Checks the options' syntax before anything starts.
     *
     * @return the addresses, or null when {@code --ip} was not given.
     * @throws BadOption naming the option and value in one sentence.
     */
    static InterfaceAddress[] parse(final List<String> ips, final List<String> gateways)
    {
        if (null == ips || ips.isEmpty())
        {
            if (null != gateways && !gateways.isEmpty())
            {
                throw new BadOption("--gateway", String.join(",", gateways), "needs --ip with a prefix on each plane",
                    "try --ip 10.0.1.10/24 --gateway " + gateways.getFirst());
            }
            return null;
        }
        if (null != gateways && !gateways.isEmpty() && gateways.size() != ips.size())
        {
            throw new BadOption("--gateway", String.join(",", gateways), "gives " + gateways.size() + " gateway(s) for " +
                ips.size() + " plane(s): give one per --ip address (none for a plane without)",
                "try --gateway " + String.join(",", java.util.Collections.nCopies(ips.size(), "none")));
        }
        final InterfaceAddress[] addresses = new InterfaceAddress[ips.size()];
        for (int p = 0; p < addresses.length; p++)
        {
            final String gateway = null == gateways || gateways.isEmpty() || gateways.get(p).equalsIgnoreCase("none") ?
                "" : gateways.get(p);
            try
            {
                InterfaceAddress.parse(ips.get(p), "");
            }
            catch (final IllegalArgumentException ex)
            {
                throw new BadOption("--ip", ips.get(p), ex.getMessage(), ips.get(p).indexOf(':') >= 0 ?
                    "try --ip fd00:1::10/64" : "try --ip 10.0.1.10/24");
            }
            try
            {
                addresses[p] = InterfaceAddress.parse(ips.get(p), gateway);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new BadOption("--gateway", gateway, ex.getMessage(), "try --gateway 10.0.1.1 with --ip 10.0.1.10/24");
            }
        }
        return addresses;
    }

    /**
     * @param given what {@link #parse} returned.
     * @return per port of {@code config}, its address: the option's, else the port's {@code ip} key.
     * @throws IllegalArgumentException when the counts differ or a port has no address.
     */
    static InterfaceAddress[] resolve(final InterfaceAddress[] given, final NicConfig config, final String what)
    {
        final List<PortConfig> ports = config.ports();
        if (null != given)
        {
            if (given.length != ports.size())
            {
                throw new IllegalArgumentException("--ip gives " + given.length + " address(es) for " + ports.size() +
                    " port(s): give one per port (plane), comma-separated");
            }
            return refuseLoopbackOnDpdk(given, ports);
        }
        final InterfaceAddress[] addresses = new InterfaceAddress[ports.size()];
        for (int p = 0; p < addresses.length; p++)
        {
            addresses[p] = ports.get(p).interfaceAddress();
            if (null == addresses[p])
            {
                throw new IllegalArgumentException(what + " needs --ip: this NIC's address on each port, e.g. " +
                    "--ip 10.0.0.2, --ip 10.0.1.10/24 --gateway 10.0.1.1 or --ip fd00:1::10/64 (or ip = \"...\" in each " +
                    "[[port]] of the config)");
            }
        }
        return refuseLoopbackOnDpdk(addresses, ports);
    }

    // a loopback address names a kernel socket's plane on this host; on an Ethernet port nobody could reach it
    private static InterfaceAddress[] refuseLoopbackOnDpdk(final InterfaceAddress[] addresses, final List<PortConfig> ports)
    {
        for (int p = 0; p < addresses.length; p++)
        {
            if (addresses[p].isLoopback() && ports.get(p).kind() != io.spraynic.pmd.PortKind.UDP)
            {
                throw new BadOption("--ip", addresses[p].toString(), "is a loopback address, which only a udp port " +
                    "(kernel sockets) can have, and port " + ports.get(p).name() + " is not one", "try --ip 10.0.1.10/24");
            }
        }
        return addresses;
    }

    /** Gives {@code nic} the addresses, plane by plane, with the ports' own MACs. */
    static EmbeddedNicConfig apply(final EmbeddedNicConfig nic, final InterfaceAddress[] addresses)
    {
        for (int p = 0; p < addresses.length; p++)
        {
            nic.local(p, addresses[p], 0);
        }
        return nic;
    }

    /** @return the addresses as one line, {@code [10.0.1.10/24 via 10.0.1.1, 10.0.2.10/24 via 10.0.2.1]}. */
    static String describe(final InterfaceAddress[] addresses)
    {
        return java.util.Arrays.toString(addresses);
    }
}
