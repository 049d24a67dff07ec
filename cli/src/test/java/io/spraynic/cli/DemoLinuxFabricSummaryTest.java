package io.spraynic.cli;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code demo --fabric linux}'s text summary ({@link LinuxFabricDemo#text}, {@link LinuxFabricDemo#header},
 * {@link LinuxFabricDemo#ratio}), the code the demo prints without {@code --json}: every figure of its {@code --json}
 * object for the same run is in it, with the same value ({@code DemoLinuxFabricTest} runs the demo across the lab and
 * judges the JSON). No lab, no root: the runs are given.
 */
class DemoLinuxFabricSummaryTest
{
    private static final LinuxFabricDemo.Settings WARM = new LinuxFabricDemo.Settings(2, 64, 1.0, 4L << 20, 4L << 20, 60,
        LinuxFabricDemo.ACK_TIMEOUT_FROM_RTT, false, false, LinuxFabricDemo.WARMUP_AS_TIMED, LabPortKind.AF_PACKET);

    @Test
    void shouldSayEveryFigureOfAVerifiedWarmSprayRunThatItsJsonHas()
    {
        final LinuxFabricDemo.Run spray = new LinuxFabricDemo.Run("spray", true, 4L << 20, 1.2345, 83, 85,
            links(1_000), "{\"verified\":true}", 4L << 20, 2.5, null);
        final String text = LinuxFabricDemo.text(spray);
        final String json = LinuxFabricDemo.json(WARM, spray, null);

        assertEquals(3, text.lines().count(), text); // verified; dropped and resent; per link (no ACK timeout: spray)
        assertTrue(text.contains(String.format(Locale.ROOT, "VERIFIED: %d MiB each way in %.3f s: %.3f Gb/s of goodput",
            (long)number(json, "bytes") >> 20, number(json, "seconds"), number(json, "goodputGbps"))), text);
        assertEquals(2 * (4L << 20) * 8 / 1.2345 / 1e9, number(json, "goodputGbps"), 1e-6, "both ways, over the time");
        assertTrue(text.contains(String.format(Locale.ROOT, "warm: after a verified warm-up of %s over the same " +
            "connection (%.3f s)", BadOption.size((long)number(json, "warmupBytes")), number(json, "warmupSeconds"))),
            text);
        assertTrue(json.contains("\"warm\":true"), json);
        assertTrue(text.contains(String.format(Locale.ROOT, "lost on the core links %d, A sent again %d (%.2f per loss)",
            (long)number(json, "dataDroppedAB"), (long)number(json, "retransmittedAB"),
            number(json, "retransmittedAB") / number(json, "dataDroppedAB"))), text);
        assertEquals(perLinkOfJson(json), perLinkOfText(text), "every core link, both directions: " + text);
        assertFalse(text.contains("ACK timeout"), text);
    }

    @Test
    void shouldSayRoceV2sAckTimeoutAsItsJsonDoesAndTheRatioOfTheTwoGoodputs()
    {
        final RoceAckTimeout.Choice ack = RoceAckTimeout.fromRtt(Map.of("sent", "100", "received", "99",
            "median_ms", "0.87", "p99_ms", "7.5", "max_ms", "9.68"));
        final LinuxFabricDemo.Run rocev2 = new LinuxFabricDemo.Run("rocev2", true, 4L << 20, 4.5, 80, 5_904,
            links(7), "{\"verified\":true}", 4L << 20, 5.25, ack);
        final LinuxFabricDemo.Run spray = new LinuxFabricDemo.Run("spray", true, 4L << 20, 1.5, 80, 80, links(500),
            "{\"verified\":true}", 4L << 20, 2.0, null);
        final String text = LinuxFabricDemo.text(rocev2);
        final String json = LinuxFabricDemo.json(WARM, spray, rocev2);
        final String rocev2Json = json.substring(json.indexOf("\"rocev2\":"));

        assertTrue(text.contains(String.format(Locale.ROOT, "local ACK timeout exponent %d (%.1f ms",
            (int)number(rocev2Json, "ackTimeoutExponent"), number(rocev2Json, "ackTimeoutMillis"))), text);
        assertTrue(text.contains(String.format(Locale.ROOT, "median %.2f, p99 %.2f, max %.2f ms",
            number(rocev2Json, "echoMedianMillis"), number(rocev2Json, "echoP99Millis"),
            number(rocev2Json, "echoMaxMillis"))), text);
        assertTrue(text.contains("lost on the core links 80, A sent again 5,904 (73.80 per loss)"), text);
        assertEquals(perLinkOfJson(rocev2Json), perLinkOfText(text), text);
        final String ratio = LinuxFabricDemo.ratio(spray, rocev2);
        assertEquals(String.format(Locale.ROOT, "spray ÷ RoCEv2 goodput across the same routers and loss: %.1fx%n",
            number(json, "goodputGbps") / number(rocev2Json, "goodputGbps")), ratio);
        assertEquals("spray ÷ RoCEv2 goodput across the same routers and loss: 3.0x", ratio.strip(), "4.5 s / 1.5 s");
    }

    @Test
    void shouldSayAColdOrFailedRunAsItsJsonDoes()
    {
        final LinuxFabricDemo.Settings cold = new LinuxFabricDemo.Settings(1, 64, 0.5, 4L << 20, 4L << 20, 60, 12, false,
            true, 0, LabPortKind.UDP);
        final LinuxFabricDemo.Run coldRun = new LinuxFabricDemo.Run("spray", true, 4L << 20, 2.0, 0, 0, links(3),
            "{\"verified\":true}", 0, Double.NaN, null);
        assertTrue(LinuxFabricDemo.text(coldRun).contains("cold (no warm-up)"), LinuxFabricDemo.text(coldRun));
        assertTrue(LinuxFabricDemo.text(coldRun).contains("lost on the core links 0, A sent again 0 (n/a per loss)"));
        final String coldJson = LinuxFabricDemo.json(cold, coldRun, null);
        assertTrue(coldJson.contains("\"warm\":false,\"warmupBytes\":0,\"warmupSeconds\":null"), coldJson);
        final String header = LinuxFabricDemo.header(cold, "d42");
        assertTrue(header.startsWith(String.format(Locale.ROOT, "Linux ECMP lab d42: %d plane(s)",
            (int)number(coldJson, "planes"))), header);
        assertTrue(header.contains(String.format(Locale.ROOT, "%.2f %% random loss", number(coldJson, "lossPct"))),
            header);
        assertTrue(header.strip().endsWith("measured cold (no warm-up)"), header);
        assertTrue(header.contains("two NIC processes on kernel UDP sockets;"), header);
        assertTrue(LinuxFabricDemo.header(WARM, "d42").contains("two NIC processes on net_af_packet;"));
        assertTrue(LinuxFabricDemo.header(WARM, "d42").strip().endsWith("as large as its measured part"));

        final LinuxFabricDemo.Run failed = new LinuxFabricDemo.Run("rocev2", false, 4L << 20, Double.NaN, 12, 3_000,
            links(1), "RETRY_EXC_ERR on the queue pair\n", 4L << 20, 1.0, RoceAckTimeout.given(12));
        final String text = LinuxFabricDemo.text(failed);
        assertEquals("  NOT VERIFIED: RETRY_EXC_ERR on the queue pair" + System.lineSeparator(), text);
        final String json = LinuxFabricDemo.json(WARM, failed, null);
        assertTrue(json.contains("\"verified\":false") && json.contains("\"retransmittedAB\":null") &&
            json.contains("\"error\":\"RETRY_EXC_ERR on the queue pair\""), json);
    }

    /** Core links p1l1..p2l4 with distinct counts each way, from {@code base}. */
    private static Map<String, long[]> links(final long base)
    {
        final Map<String, long[]> links = new TreeMap<>();
        long count = base;
        for (final String link : List.of("p1l1", "p1l2", "p1l3", "p1l4", "p2l1", "p2l2", "p2l3", "p2l4"))
        {
            links.put(link, new long[] {count, count + 3});
            count += 11;
        }
        return links;
    }

    private static Map<String, String> perLinkOfJson(final String json)
    {
        final String object = json.substring(json.indexOf("\"packetsPerLink\":{"));
        final Map<String, String> links = new TreeMap<>();
        final Matcher m = Pattern.compile("\"(p\\d+l\\d+)\":\\[(\\d+),(\\d+)]").matcher(
            object.substring(0, object.indexOf('}')));
        while (m.find())
        {
            links.put(m.group(1), m.group(2) + "/" + m.group(3));
        }
        assertEquals(8, links.size(), json);
        return links;
    }

    private static Map<String, String> perLinkOfText(final String text)
    {
        final String line = text.lines().filter(l -> l.contains("packets per core link")).findFirst().orElseThrow();
        final Map<String, String> links = new TreeMap<>();
        final Matcher m = Pattern.compile("(p\\d+l\\d+) (\\d+)/(\\d+)").matcher(line);
        while (m.find())
        {
            links.put(m.group(1), m.group(2) + "/" + m.group(3));
        }
        return links;
    }

    private static double number(final String json, final String field)
    {
        final double value = LabPeers.json(json, field);
        assertFalse(Double.isNaN(value), field + " in " + json);
        return value;
    }
}
