package io.spraynic.pmd;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Properties over random inputs, from fixed seeds so a failure reproduces: whatever a file says, the only
 * failure is a {@link ConfigException} naming the file; whatever is accepted survives a round trip.
 */
class ConfigPropertiesTest
{
    private static final long SEED = 0x5_9_4A_1CL;
    private static final int TRIES = 2000;

    private static final List<String> KEYS = new ArrayList<>();

    static
    {
        KEYS.addAll(NicConfigParser.EAL_KEYS);
        KEYS.addAll(NicConfigParser.MEMPOOL_KEYS);
        KEYS.addAll(NicConfigParser.PORT_KEYS);
        KEYS.add("nonsense");
    }

    private static final List<String> VALUES = List.of(
        "true", "false", "0", "1", "2", "-1", "64", "512", "1024", "1500", "9000", "8191", "1.5", "99999999999999999999",
        "[]", "[1, 2]", "[\"a\"]", "[\"--in-memory\"]", "{ a = 1 }", "{ iface = \"veth0\", qpairs = 2 }", "\"\"", "\"0\"",
        "\"p\"", "\"q\"", "\"net_null1\"", "\"net_tap0\"", "\"net_memif0\"", "\"0000:3b:00.0\"", "\"ring_pair\"",
        "\"pci\"", "\"vdev\"", "\"iface=veth0\"", "\"a,b\"", "\"02:00:00:00:00:01\"", "\"0@(0-1)\"", "\"va\"",
        "\"/dev/hugepages\"", "\"role=client,zero-copy=yes\"", "1979-05-27", "inf");

    /** A value each key accepts on its own, so that random documents are accepted often enough to round-trip. */
    private static final Map<String, String> PLAUSIBLE = Map.ofEntries(
        Map.entry("program", "\"sn\""), Map.entry("lcores", "\"0@(0-1)\""), Map.entry("no_huge", "true"),
        Map.entry("memory_mb", "1024"), Map.entry("socket_mem", "[]"), Map.entry("in_memory", "false"),
        Map.entry("single_file_segments", "true"), Map.entry("no_pci", "true"), Map.entry("file_prefix", "\"x\""),
        Map.entry("iova_mode", "\"va\""), Map.entry("log_level", "\"debug\""),
        Map.entry("extra_args", "[\"--no-telemetry\"]"), Map.entry("mbufs", "16383"), Map.entry("cache", "128"),
        Map.entry("data_room", "4096"), Map.entry("priv_size", "8"), Map.entry("socket_id", "0"),
        Map.entry("args", "{ size = 64 }"), Map.entry("rx_queues", "2"), Map.entry("tx_queues", "2"),
        Map.entry("rx_descriptors", "512"), Map.entry("tx_descriptors", "512"), Map.entry("mtu", "1400"),
        Map.entry("promiscuous", "true"), Map.entry("mac", "\"02:00:00:00:00:09\""),
        Map.entry("ip", "\"10.0.1.10/24\""), Map.entry("gateway", "\"10.0.1.1\""));

    @Test
    void shouldFailOnlyWithConfigExceptionOnRandomDocuments()
    {
        final Random random = new Random(SEED);
        int accepted = 0;
        for (int i = 0; i < TRIES; i++)
        {
            final String toml = document(random);
            try
            {
                final NicConfig config = NicConfig.parse(toml, "random.toml");
                assertEquals(config, NicConfig.parse(config.toToml(), "written"), toml);
                accepted++;
            }
            catch (final ConfigException ex)
            {
                assertEquals("random.toml", ex.source(), toml);
            }
            catch (final RuntimeException ex)
            {
                fail("try " + i + " threw " + ex + " for:\n" + toml, ex);
            }
        }

        // The generator must reach accepted documents too, or the round trip is never exercised.
        if (accepted < TRIES / 50)
        {
            fail("only " + accepted + " of " + TRIES + " random documents were accepted");
        }
    }

    @Test
    void shouldRoundTripOrRefuseEveryRandomPort()
    {
        final Random random = new Random(SEED + 1);
        int accepted = 0;
        for (int i = 0; i < TRIES; i++)
        {
            final PortConfig port = PortConfig.vdev("p", "net_tap0", "iface=sn-tap0")
                .withQueues(random.nextInt(-2, 70), random.nextInt(-2, 70))
                .withDescriptors(descriptors(random), descriptors(random))
                .withMtu(random.nextInt(0, 10000))
                .withPromiscuous(random.nextBoolean());
            try
            {
                final NicConfig config =
                    NicConfig.of(EalConfig.DEFAULT.withMemoryMb(2048), MempoolConfig.DEFAULT.withMbufs(262143), List.of(port));
                assertEquals(config, NicConfig.parse(config.toToml(), "written"));
                assertEquals("--vdev=net_tap0,iface=sn-tap0", config.ealArguments().getLast());
                accepted++;
            }
            catch (final ConfigException ex)
            {
                assertEquals("", ex.source());
                assertEquals(true, ex.key().startsWith("port[0].") || ex.key().startsWith("mempool."), ex.key());
            }
        }

        if (accepted < TRIES / 50)
        {
            fail("only " + accepted + " of " + TRIES + " random ports were accepted");
        }
    }

    private static int descriptors(final Random random)
    {
        return random.nextBoolean() ? 1 << random.nextInt(5, 17) : random.nextInt(0, 70000);
    }

    private static String document(final Random random)
    {
        final StringBuilder sb = new StringBuilder();
        if (random.nextBoolean())
        {
            sb.append("[eal]\n").append(lines(random));
        }
        if (random.nextBoolean())
        {
            sb.append("[mempool]\n").append(lines(random));
        }
        final int ports = random.nextInt(0, 4);
        for (int i = 0; i < ports; i++)
        {
            sb.append("[[port]]\n");
            if (random.nextInt(4) != 0)
            {
                sb.append("name = \"p").append(i).append("\"\nkind = \"vdev\"\ndevice = \"net_null").append(i).append("\"\n");
                sb.append(lines(random).replaceAll("(?m)^(name|kind|device) = .*\\n", ""));
            }
            else
            {
                sb.append(lines(random));
            }
        }

        return sb.toString();
    }

    private static String lines(final Random random)
    {
        final List<String> keys = new ArrayList<>(KEYS);
        final StringBuilder sb = new StringBuilder();
        final int count = random.nextInt(0, 4);
        for (int i = 0; i < count; i++)
        {
            final String key = keys.remove(random.nextInt(keys.size()));
            final int pick = random.nextInt(6);
            final String value = pick == 0 ? Toml.quote(randomText(random)) :
                pick < 3 || !PLAUSIBLE.containsKey(key) ? VALUES.get(random.nextInt(VALUES.size())) : PLAUSIBLE.get(key);
            sb.append(key).append(" = ").append(value).append('\n');
        }

        return sb.toString();
    }

    private static String randomText(final Random random)
    {
        final char[] chars = new char[random.nextInt(0, 9)];
        for (int i = 0; i < chars.length; i++)
        {
            chars[i] = (char)random.nextInt(0, 0x250);
        }

        return new String(chars);
    }
}
