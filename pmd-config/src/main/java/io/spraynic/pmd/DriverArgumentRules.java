package io.spraynic.pmd;

import java.util.List;

import static io.spraynic.pmd.ConfigRules.QUEUES;
import static io.spraynic.pmd.ConfigRules.key;

/**
 * The vdev driver arguments worth checking before EAL (net_memif, net_af_packet): those that otherwise fail late or
 * silently. Part of {@link ConfigRules}.
 */
final class DriverArgumentRules
{
    private DriverArgumentRules()
    {
    }

    /** Checks the arguments of every net_memif and net_af_packet vdev port, in file order. */
    static void check(final EalConfig eal, final List<PortConfig> ports)
    {
        for (int i = 0; i < ports.size(); i++)
        {
            final PortConfig port = ports.get(i);
            if (port.kind() != PortKind.VDEV)
            {
                continue;
            }

            final List<Devargs.Entry> args = Devargs.parse(port.args(), key(i, "args"));
            if (port.device().startsWith("net_memif"))
            {
                checkMemif(i, port, args, eal);
            }
            else if (port.device().startsWith("net_af_packet"))
            {
                checkAfPacket(i, port, args);
            }
        }
    }

    private static void checkMemif(
        final int i, final PortConfig port, final List<Devargs.Entry> args, final EalConfig eal)
    {
        final String role = Devargs.first(args, "role");
        if (role != null && !role.equals("server") && !role.equals("client"))
        {
            throw new ConfigException(key(i, "args.role"), Toml.quote(role), "must be \"server\" or \"client\"");
        }
        final String zeroCopy = Devargs.first(args, "zero-copy");
        if (zeroCopy != null && !zeroCopy.equals("yes") && !zeroCopy.equals("no"))
        {
            throw new ConfigException(key(i, "args.zero-copy"), Toml.quote(zeroCopy), "must be \"yes\" or \"no\"");
        }
        if ("yes".equals(zeroCopy))
        {
            if (!"client".equals(role))
            {
                throw new ConfigException(key(i, "args.zero-copy"), Toml.quote(zeroCopy),
                    "must be \"no\" unless role = \"client\": only a memif client maps the server's buffers",
                    "set role = \"client\", or zero-copy = \"no\"");
            }
            if (!eal.singleFileSegments())
            {
                throw new ConfigException("eal.single_file_segments", "false",
                    "must be true when port[" + i + "] (" + Toml.quote(port.name()) +
                    ") uses memif zero-copy: the client maps the memory one file per segment list",
                    "set single_file_segments = true");
            }
        }
    }

    private static void checkAfPacket(final int i, final PortConfig port, final List<Devargs.Entry> args)
    {
        if (Devargs.first(args, "iface") == null)
        {
            throw new ConfigException(key(i, "args.iface"), ConfigException.MISSING,
                "must name the kernel interface net_af_packet binds to, e.g. iface = \"veth0\"");
        }
        final String qpairsText = Devargs.first(args, "qpairs");
        final int qpairs;
        try
        {
            qpairs = qpairsText == null ? 1 : Integer.parseInt(qpairsText);
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(key(i, "args.qpairs"), Toml.quote(qpairsText),
                "must be an integer between 1 and " + QUEUES.max());
        }
        if (qpairs < 1 || qpairs > QUEUES.max())
        {
            throw new ConfigException(key(i, "args.qpairs"), Toml.quote(qpairsText),
                "must be an integer between 1 and " + QUEUES.max());
        }
        final int frameSize = positiveArgument(i, args, "framesz", PortConfig.AF_PACKET_DEFAULT_FRAME_SIZE);
        final int blockSize = positiveArgument(i, args, "blocksz", 4096);
        if (frameSize % 16 != 0 || frameSize <= PortConfig.AF_PACKET_FRAME_HEADER + 60)
        {
            throw new ConfigException(key(i, "args.framesz"), Integer.toString(frameSize),
                "must be a multiple of 16 (TPACKET_ALIGNMENT) above " + (PortConfig.AF_PACKET_FRAME_HEADER + 60),
                "use framesz=" + Math.max(PortConfig.AF_PACKET_DEFAULT_FRAME_SIZE, frameSize + 15 & ~15));
        }
        if (blockSize % 4096 != 0 || blockSize % frameSize != 0)
        {
            // net_af_packet finds frame i at i * framesz: frames must fill each block with nothing left over
            final long pages = frameSize / gcd(frameSize, 4096);
            throw new ConfigException(key(i, "args.blocksz"), Integer.toString(blockSize),
                "must be a multiple of both the 4096 B page and framesz (" + frameSize +
                "): net_af_packet lays its ring frames back to back", "use blocksz=" + pages * 4096);
        }
        final int queues = Math.max(port.rxQueues(), port.txQueues());
        if (queues > qpairs)
        {
            final String which = port.rxQueues() >= port.txQueues() ? "rx_queues" : "tx_queues";
            throw new ConfigException(key(i, which), Integer.toString(queues),
                "must be at most args.qpairs (" + qpairs + "): net_af_packet opens one socket per queue pair",
                "set args.qpairs = " + queues + ", or use " + qpairs);
        }
    }

    private static long gcd(final long a, final long b)
    {
        return b == 0 ? a : gcd(b, a % b);
    }

    private static int positiveArgument(final int i, final List<Devargs.Entry> args, final String name, final int absent)
    {
        final String text = Devargs.first(args, name);
        if (null == text)
        {
            return absent;
        }
        try
        {
            final int value = Integer.parseInt(text);
            if (value > 0 && value <= 1 << 20)
            {
                return value;
            }
        }
        catch (final NumberFormatException ignored)
        {
            // refused below
        }
        throw new ConfigException(key(i, "args." + name), Toml.quote(text), "must be an integer between 1 and " + (1 << 20));
    }
}
