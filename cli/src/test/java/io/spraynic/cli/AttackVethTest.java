package io.spraynic.cli;

import io.spraynic.datapath.telemetry.CountersFileReader;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.ProbeHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import io.spraynic.datapath.wire.UdpHeader;
import io.spraynic.datapath.port.TestNetwork;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static io.spraynic.cli.CliTestSupport.javaCommand;
import static io.spraynic.datapath.port.DpdkTestSupport.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 12: an attacker on the same L2 as a serving spray NIC, over real DPDK {@code net_af_packet} ports on veth.
 * Three network namespaces hang off one kernel bridge (in a fourth): a {@code spraynic nic} serving in B, a
 * {@code spraynic transfer} visiting it from A, and an attacker in X with a raw AF_PACKET socket (python3, no
 * scapy). While the transfer runs, the attacker learns the serving connection's CID from a capture of the
 * legitimate traffic, then sends forged CLOSE, PROBE (RESYNC), ACK and NACK naming it, from the client's address and
 * from its own, with made-up tags; a CONNECT flood from thousands of spoofed source addresses; CONNECTs with absurd
 * fields; and garbage in valid UDP 4791 encapsulation. The frames are built here with the project's writer, so their
 * ICRCs are right (checked by parsing each before it is sent). The transfer completes with every byte verified;
 * the serving NIC's counters account for every hostile frame by reason; the flood creates no connection; no worker
 * faulted. The namespaces (and with them every link) are created here and removed afterwards, also on failure and
 * when the JVM is killed. Needs root (CI is root).
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class AttackVethTest
{
    private static final long ID = TestNetwork.ID;
    private static final String NS_A = TestNetwork.name("spatka");
    private static final String NS_B = TestNetwork.name("spatkb");
    private static final String NS_X = TestNetwork.name("spatkx");
    private static final String NS_SWITCH = TestNetwork.name("spatks");
    private static final String BRIDGE = TestNetwork.name("spabr");
    private static final String VETH_A = TestNetwork.name("spava");
    private static final String VETH_B = TestNetwork.name("spavb");
    private static final String VETH_X = TestNetwork.name("spavx");
    private static final int IP_A = 0x0A63_0001; // 10.99.0.1
    private static final int IP_B = 0x0A63_0002;
    private static final int IP_FOREIGN = 0x0A63_0042;
    private static final long MAC_X = 0x02_66_66_66_66_66L;
    private static final String SIZE = "48m"; // each way, at most 100 Mbit/s: 4 s or more
    private static final int FLOOD = 3000;
    private static final int FORGERIES_PER_KIND = 8;
    private static final int GARBAGE = 400;
    private static final int[] SPRAY_OPCODES = {SprayOpcodes.WRITE, SprayOpcodes.WRITE_WITH_IMMEDIATE, SprayOpcodes.SEND,
        SprayOpcodes.SEND_WITH_IMMEDIATE, SprayOpcodes.READ_REQUEST, SprayOpcodes.READ_RESPONSE, SprayOpcodes.ACK,
        SprayOpcodes.PROBE, SprayOpcodes.NACK, SprayOpcodes.QUERY, SprayOpcodes.CLOSE, SprayOpcodes.CLOSE_ACK};
    private static final int[] FORGED_OPCODES = {SprayOpcodes.CLOSE, SprayOpcodes.PROBE, SprayOpcodes.ACK, SprayOpcodes.NACK};
    private static TestNetwork network;

    /** Sends length-prefixed frames from a file out of an interface, paced so that no socket ring overflows. */
    private static final String SENDER = String.join("\n",
        "import socket, struct, sys, time, errno",
        "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)",
        "s.bind((sys.argv[1], 0))",
        "data = open(sys.argv[2], 'rb').read()",
        "i = n = 0",
        "while i < len(data):",
        "    l = struct.unpack_from('>H', data, i)[0]; i += 2",
        "    while True:",
        "        try:",
        "            s.send(data[i:i + l]); break",
        "        except OSError as e:",
        "            if e.errno != errno.ENOBUFS: raise",
        "            time.sleep(0.001)",
        "    i += l; n += 1",
        "    if n % 16 == 0: time.sleep(0.002)",
        "print('sent', n)");

    /** Prints, hex, up to argv[3] IPv4 UDP 4791 frames received on argv[1] from source address argv[2]. */
    private static final String SNIFFER = String.join("\n",
        "import socket, sys, time",
        "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))",
        "s.bind((sys.argv[1], 0)); s.settimeout(1.0)",
        "src = socket.inet_aton(sys.argv[2]); want = int(sys.argv[3]); end = time.time() + 15; n = 0",
        "while n < want and time.time() < end:",
        "    try: f = s.recv(4096)",
        "    except socket.timeout: continue",
        "    if len(f) > 54 and f[23] == 17 and f[26:30] == src and f[36:38] == b'\\x12\\xb7':",
        "        print(f.hex()); n += 1",
        "sys.stdout.flush()");

    @BeforeAll
    static void createNetwork() throws Exception
    {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "SKIPPED: the attacker needs python3");
        network = TestNetwork.create("four network namespaces, a bridge and veth pairs", NS_A, NS_B, NS_X, NS_SWITCH)
            .disableIpv6(NS_A, NS_B, NS_X, NS_SWITCH);
        final List<String> switchEnds = new ArrayList<>();
        for (final String[] host : new String[][]{{NS_A, VETH_A}, {NS_B, VETH_B}, {NS_X, VETH_X}})
        {
            switchEnds.add(host[1] + "s");
            network.veth(host[0], host[1], NS_SWITCH, host[1] + "s");
        }
        network.bridge(NS_SWITCH, BRIDGE, switchEnds);
        // the legitimate hosts send at most 100 Mbit/s each (a qdisc: net_af_packet leaves qdisc_bypass off), so the
        // transfer lasts seconds on any machine and the attack lands while it runs; the attacker is not shaped
        shapeLegitimateHosts("add", "100mbit");
    }

    private static void shapeLegitimateHosts(final String verb, final String rate) throws Exception
    {
        for (final String[] host : new String[][]{{NS_A, VETH_A}, {NS_B, VETH_B}})
        {
            run("ip", "netns", "exec", host[0], "tc", "qdisc", verb, "dev", host[1], "root", "tbf", "rate", rate,
                "burst", "64kb", "latency", "50ms");
        }
    }

    @AfterAll
    static void deleteNetwork()
    {
        if (null != network)
        {
            network.close();
        }
    }

    @Test
    void shouldCompleteAVerifiedTransferAndCountEveryHostileFrameByReason(@TempDir final Path dir) throws Exception
    {
        final Path exchange = Files.createDirectory(dir.resolve("exchange"));
        final Path runDir = Files.createDirectory(dir.resolve("run"));
        final Path nicOut = dir.resolve("nic.out");
        final List<String> serve = new ArrayList<>(List.of("ip", "netns", "exec", NS_B));
        serve.addAll(javaCommand(List.of("nic", "--config", servingConfig(dir).toString(), "--mode", "spray", "--ip", "10.99.0.2",
            "--expose", SIZE, "--exchange", exchange.toString(), "--seconds", "200")));
        final ProcessBuilder nicBuilder = new ProcessBuilder(serve).redirectErrorStream(true).redirectOutput(nicOut.toFile());
        nicBuilder.environment().put("SPRAYNIC_RUN_DIR", runDir.toString());
        final Process nic = nicBuilder.start();
        final Path clientOut = dir.resolve("client.out");
        Process client = null;
        try
        {
            final String started = await(nicOut, s -> s.contains("counters in "), 90, "the serving NIC started");
            final Matcher countersPath = Pattern.compile("counters in (\\S+)").matcher(started);
            assertTrue(countersPath.find(), started);
            final Path countersFile = Path.of(countersPath.group(1));

            final List<String> visit = new ArrayList<>(List.of("ip", "netns", "exec", NS_A));
            visit.addAll(javaCommand(List.of("transfer", "--config", "net_af_packet", "-p", "iface=" + VETH_A, "-p",
                "file_prefix=spraynic-attack-visit-" + ID, "--mode", "spray", "--peer-kind", "nic", "--ip", "10.99.0.1",
                "--exchange", exchange.toString(), "--size", SIZE, "--timeout", "120", "--json")));
            final ProcessBuilder clientBuilder = new ProcessBuilder(visit).redirectErrorStream(true)
                .redirectOutput(clientOut.toFile());
            clientBuilder.environment().put("SPRAYNIC_RUN_DIR", runDir.toString());
            client = clientBuilder.start();
            final String accepted = await(nicOut, s -> s.contains("accepted connection"), 90, "B accepted the visitor");
            final Matcher acceptedCid = Pattern.compile("accepted connection 0x([0-9a-f]+)").matcher(accepted);
            assertTrue(acceptedCid.find(), accepted);
            // while the attack lands the visit crawls at 10 Mbit/s, so it is still open when B's counters are read
            // however slowly the attacker's python starts on a loaded machine (at 100 Mbit/s a visit of 8 s could
            // finish, and B forget its connection, before the check); full speed again once the forgeries are judged
            shapeLegitimateHosts("change", "10mbit");

            // the attacker's capture of the legitimate traffic towards B: the CID it names, B's MAC
            final List<byte[]> captured = sniff(NS_B, VETH_B, "10.99.0.1", 8);
            assertTrue(!captured.isEmpty(), "captured traffic from A to B");
            final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), true);
            final RoceFrame parsed = new RoceFrame();
            int cid = -1;
            long macB = 0;
            for (final byte[] frame : captured)
            {
                final MemorySegment f = MemorySegment.ofArray(frame);
                if (parser.parse(f, 0, frame.length, parsed) == FrameClass.ROCE && parsed.opcode() != SprayOpcodes.CONNECT)
                {
                    cid = parsed.destQp();
                    macB = EthernetHeader.destinationMac(f, 0);
                }
            }
            assertEquals(Integer.parseInt(acceptedCid.group(1), 16), cid,
                "the CID learned from the capture is the one B accepted the visitor on");

            final Map<String, Long> before = counters(countersFile);
            final SplittableRandom random = new SplittableRandom(0xA77AC4L);
            final List<byte[]> attack = new ArrayList<>();
            // 1. forgeries naming B's connection, made-up tags: from A's address, then from a foreign one
            for (final int source : new int[]{IP_A, IP_FOREIGN})
            {
                for (int i = 0; i < FORGERIES_PER_KIND; i++)
                {
                    for (final int opcode : FORGED_OPCODES)
                    {
                        attack.add(forged(opcode, source, macB, cid, random));
                    }
                }
            }
            // 2. CONNECTs with absurd fields, 3. a flood of well-formed cookie-less CONNECTs from spoofed sources
            final int absurdEach = 4;
            for (int i = 0; i < absurdEach; i++)
            {
                attack.add(connect(IP_FOREIGN, macB, 0, 1024, ConnectionHeader.VERSION, 0x700 + i, random));
                attack.add(connect(IP_FOREIGN, macB, 4, 100_000, ConnectionHeader.VERSION, 0x710 + i, random));
                attack.add(connect(IP_FOREIGN, macB, 4, 1024, 1, 0x720 + i, random));
            }
            for (int i = 0; i < FLOOD; i++)
            {
                attack.add(connect(0x0A62_0000 + 1 + i, macB, 4, 1024, ConnectionHeader.VERSION, 0x1000 + i, random));
            }
            // 4. garbage in valid UDP 4791 encapsulation
            final int[] garbageToTransport = new int[1];
            for (int i = 0; i < GARBAGE; i++)
            {
                attack.add(garbage(macB, cid, random, garbageToTransport));
            }
            final Path frames = dir.resolve("attack.frames");
            writeFrames(frames, attack);
            final String sent = python(NS_X, SENDER, VETH_X, frames.toString());
            assertTrue(sent.contains("sent " + attack.size()), sent);
            // the forged CLOSEs (sent first) are refused by now, and the connection is still up: no CLOSE was taken
            final int forgeries = FORGED_OPCODES.length * FORGERIES_PER_KIND;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            Map<String, Long> during = counters(countersFile);
            while (delta(before, during, "spray auth_failures") + delta(before, during, "spray address_mismatches") <
                2L * forgeries && System.nanoTime() < deadline)
            {
                Thread.sleep(20);
                during = counters(countersFile);
            }
            assertTrue(client.isAlive(), "the attack ended while the transfer still ran: " + Files.readString(clientOut));
            final String closes = String.format("conn 0x%x: closes_received", cid);
            assertEquals(0L, during.get(closes), closes + ": " + during);
            shapeLegitimateHosts("change", "100mbit");

            final boolean clientDone = client.waitFor(150, TimeUnit.SECONDS);
            final String visitOut = Files.readString(clientOut);
            assertTrue(clientDone, "the visit ended in time: " + visitOut);
            assertEquals(0, client.exitValue(), visitOut + " nic: " + Files.readString(nicOut));
            assertTrue(visitOut.contains("\"verified\":true"), visitOut);
            System.out.println("attack over veth: the visit, attacked: " + visitOut.strip());

            final Map<String, Long> after = counters(countersFile);
            final String all = after.toString();
            System.out.println("attack over veth: " + attack.size() + " hostile frames (" + garbageToTransport[0] +
                " garbage past the parser); " + relevant(before, after));
            assertEquals(forgeries, delta(before, after, "spray auth_failures"), "forgeries from A's address: " + all);
            assertEquals(forgeries, delta(before, after, "spray address_mismatches"), "forgeries from elsewhere: " + all);
            assertEquals(2 * absurdEach, delta(before, after, "spray refused_bad_parameters"), "paths 0, MTU 100000: " + all);
            assertEquals(absurdEach, delta(before, after, "spray refused_version"), "version 1: " + all);
            assertEquals(FLOOD + 3 * absurdEach, delta(before, after, "spray connect_retries_sent") +
                delta(before, after, "spray connect_rejects_sent") +
                delta(before, after, "spray connect_responses_rate_limited"),
                "every CONNECT answered statelessly or counted as rate-limited: " + all);
            long malformed = 0;
            for (final Map.Entry<String, Long> e : after.entrySet())
            {
                if (e.getKey().contains("parse malformed_"))
                {
                    malformed += e.getValue() - before.getOrDefault(e.getKey(), 0L);
                }
            }
            assertEquals(GARBAGE - garbageToTransport[0], malformed, "garbage dropped by the parser: " + all);
            assertEquals(garbageToTransport[0], delta(before, after, "spray unknown_connection") +
                delta(before, after, "spray malformed"), "garbage the parser took, dropped by the transport: " + all);
            // the only connection B ever had is the visitor's: each connection publishes counters labelled by its CID,
            // while it is open (once the visitor has closed, B forgets it and its counters too)
            final Set<String> visitorOnly = Set.of(String.format("conn 0x%x:", cid));
            assertEquals(visitorOnly, connectionLabels(during), "after the whole attack, the flood created no connection");
            assertTrue(visitorOnly.containsAll(connectionLabels(after)), "no connection came later either: " + all);
            for (final String none : List.of("spray resyncs_refused", "spray msn_out_of_window", "spray cookie_failures",
                "spray handshake_auth_failures", "spray no_resources", "frame faults (exception handling a frame, dropped)",
                "loop faults (exception in a command, poller, post or tick)"))
            {
                assertTrue(after.keySet().stream().anyMatch(label -> label.endsWith(none)), "B publishes " + none);
                assertEquals(0, sum(after, none), none + ": " + all);
            }
            // what an operator sees: spraynic stat --json on B's counters file shows the same refusals
            final Process stat = new ProcessBuilder(javaCommand(List.of("stat", "--file", countersFile.toString(), "--json")))
                .redirectErrorStream(true).start();
            final String statOut = new String(stat.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(stat.waitFor(60, TimeUnit.SECONDS) && stat.exitValue() == 0, statOut);
            for (final String reason : List.of("worker 0: spray auth_failures", "worker 0: spray address_mismatches",
                "worker 0: spray refused_bad_parameters", "worker 0: spray refused_version",
                "worker 0: spray connect_retries_sent"))
            {
                assertTrue(statOut.contains("\"value\":" + after.get(reason) + ",\"label\":\"" + reason + "\""),
                    reason + "=" + after.get(reason) + " in " + statOut);
            }

            nic.destroy(); // SIGTERM: the serving NIC drains and stops
            assertTrue(nic.waitFor(60, TimeUnit.SECONDS), "the serving NIC stopped on SIGTERM");
            final String served = Files.readString(nicOut);
            assertEquals(1, served.split("accepted connection", -1).length - 1, "the flood created no connection: " + served);
            assertTrue(served.contains("spraynic nic: stopped; drained"), served);
        }
        finally
        {
            if (null != client)
            {
                client.destroyForcibly();
            }
            nic.destroyForcibly();
        }
    }

    /**
     * The net_af_packet preset, but with a socket ring of 8192 frames (the PMD's default is 512): on this shared
     * machine B's worker can be off its core for milliseconds, and the ring holds what arrives meanwhile.
     */
    private static Path servingConfig(final Path dir) throws IOException
    {
        return Files.writeString(dir.resolve("serving.toml"), String.join("\n",
            "[eal]", "lcores = \"0\"", "no_huge = true", "memory_mb = 512", "no_pci = true",
            "file_prefix = \"spraynic-attack-nic-" + ID + "\"", "",
            "[[port]]", "name = \"afp0\"", "kind = \"vdev\"", "device = \"net_af_packet0\"",
            "args = { iface = \"" + VETH_B + "\", qpairs = 1, blocksz = 4096, framesz = 2048, framecnt = 8192 }",
            "rx_queues = 1", "tx_queues = 1", "promiscuous = true", ""));
    }

    // ---- the attacker's frames, built with the project's writer (right ICRCs), each checked by parsing it

    private static RoceFrameWriter writer(final int sourceIp, final long macB, final int destQp, final int opcode,
        final SplittableRandom random)
    {
        return new RoceFrameWriter(SprayOpcodes.TABLE).ethernet(MAC_X, macB).ipv4(sourceIp, IP_B)
            .udpSourcePort(0xC000 + random.nextInt(0x3FFF)).destQp(destQp).opcode(opcode).psn(random.nextInt(1 << 24));
    }

    /** A tagged control frame naming {@code cid}, every header field zero but a made-up tag (a RESYNC for PROBE). */
    private static byte[] forged(final int opcode, final int sourceIp, final long macB, final int cid,
        final SplittableRandom random)
    {
        final RoceFrameWriter writer = writer(sourceIp, macB, cid, opcode, random);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment f = arena.allocate(writer.frameLength(0));
            final int length = writer.writeFrame(f, 0, 0);
            final RoceFrame frame = parse(f, length);
            final long custom = frame.customHeaderOffset();
            final long tag = random.nextLong();
            switch (opcode)
            {
                case SprayOpcodes.CLOSE ->
                {
                    ConnectionHeader.write(f, custom, 0, 8, 1, 1024, 4, random.nextInt(), 0, 100_000, random.nextLong());
                    ConnectionHeader.tag(f, custom, tag);
                }
                case SprayOpcodes.PROBE ->
                {
                    ProbeHeader.flags(f, custom, ProbeHeader.FLAG_RESYNC);
                    ProbeHeader.nextPsn(f, custom, random.nextInt(1 << 24));
                    ProbeHeader.tag(f, custom, tag);
                }
                case SprayOpcodes.ACK -> SelectiveAckHeader.tag(f, custom, tag);
                default -> NegativeAckHeader.tag(f, custom, tag);
            }
            reseal(f, frame);
            return checked(f, length);
        }
    }

    /** A cookie-less CONNECT (S5.6) with a well-formed public key; the given limits and version. */
    private static byte[] connect(final int sourceIp, final long macB, final int paths, final int mtu, final int version,
        final int senderCid, final SplittableRandom random)
    {
        final RoceFrameWriter writer = writer(sourceIp, macB, 0, SprayOpcodes.CONNECT, random);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment f = arena.allocate(writer.frameLength(HandshakeBlock.LENGTH));
            final long custom = writer.payloadOffset() - ConnectionHeader.LENGTH;
            ConnectionHeader.write(f, custom, 0, paths, 1, mtu, 4, senderCid, random.nextInt(1 << 24), 100_000,
                random.nextLong());
            f.set(ValueLayout.JAVA_BYTE, custom + ConnectionHeader.VERSION_OFFSET, (byte)version);
            final byte[] publicKey = new byte[HandshakeBlock.PUBLIC_KEY_LENGTH];
            publicKey[0] = 9; // the X25519 base point: any well-formed key does before the cookie
            HandshakeBlock.writePublicKey(f, writer.payloadOffset(), publicKey);
            return checked(f, writer.writeFrame(f, 0, HandshakeBlock.LENGTH));
        }
    }

    /**
     * Random bytes after a valid Ethernet, IPv4 and UDP 4791 header. Half keep a wrong ICRC; the other half are
     * resealed with the right one, so that they reach the parser's later checks (TVer, pad count, opcode, lengths),
     * or, where a random header happens to pass them all, the transport as a packet for no connection. None is a
     * handshake or names {@code cid}: those are drawn again; so is a RoCE opcode outside spray's, which the spray
     * engine leaves to "some other transport" without counting it (SprayEngine.onFrame), though a spray NIC has none.
     *
     * @param toTransport counts the frames the parser takes (the transport's to drop), [0].
     */
    private static byte[] garbage(final long macB, final int cid, final SplittableRandom random, final int[] toTransport)
    {
        while (true)
        {
            final RoceFrameWriter writer = writer(0x0A61_0000 + random.nextInt(1 << 16), macB, random.nextInt(1 << 24),
                SprayOpcodes.WRITE, random);
            final int payload = random.nextInt(1024);
            try (Arena arena = Arena.ofConfined())
            {
                final MemorySegment f = arena.allocate(writer.frameLength(payload));
                final int length = writer.writeFrame(f, 0, payload);
                final int udpEnd = EthernetHeader.LENGTH + Ipv4Header.LENGTH + UdpHeader.LENGTH;
                for (int i = udpEnd; i < length; i++)
                {
                    f.set(ValueLayout.JAVA_BYTE, i, (byte)random.nextInt());
                }
                final boolean reseal = random.nextBoolean();
                if (reseal)
                {
                    // mostly past the BTH's own checks: TVer 0, and often a spray opcode, so the lengths are checked
                    final int bth = udpEnd;
                    f.set(ValueLayout.JAVA_BYTE, bth + 1, (byte)(f.get(ValueLayout.JAVA_BYTE, bth + 1) & 0xF0));
                    if (random.nextBoolean())
                    {
                        f.set(ValueLayout.JAVA_BYTE, bth, (byte)SPRAY_OPCODES[random.nextInt(SPRAY_OPCODES.length)]);
                    }
                    final long icrc = length - Icrc.LENGTH;
                    Icrc.write(f, icrc, new Icrc().compute(f, EthernetHeader.LENGTH, 4, Ipv4Header.LENGTH, icrc));
                }
                final ParseCounters counters = new ParseCounters();
                final RoceFrame frame = new RoceFrame();
                final FrameClass kind = new RoceParser(SprayOpcodes.TABLE, counters, true).parse(f, 0, length, frame);
                if (kind == FrameClass.ROCE && (frame.destQp() == cid || null == SprayOpcodes.name(frame.opcode()) ||
                    frame.opcode() == SprayOpcodes.CONNECT ||
                    frame.opcode() == SprayOpcodes.CONNECT_ACK || frame.opcode() == SprayOpcodes.CONNECT_RETRY ||
                    frame.opcode() == SprayOpcodes.CONNECT_REJECT))
                {
                    continue;
                }
                assertTrue(kind == FrameClass.MALFORMED || (reseal && kind == FrameClass.ROCE), kind + " " + counters);
                toTransport[0] += kind == FrameClass.ROCE ? 1 : 0;
                return f.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE);
            }
        }
    }

    private static RoceFrame parse(final MemorySegment f, final int length)
    {
        final ParseCounters counters = new ParseCounters();
        final RoceFrame frame = new RoceFrame();
        assertEquals(FrameClass.ROCE, new RoceParser(SprayOpcodes.TABLE, counters, true).parse(f, 0, length, frame),
            counters.toString());
        return frame;
    }

    /** @return the frame's bytes, after checking that the parser takes it (ICRC and lengths right). */
    private static byte[] checked(final MemorySegment f, final int length)
    {
        parse(f, length);
        return f.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE);
    }

    private static void reseal(final MemorySegment f, final RoceFrame frame)
    {
        final long icrc = frame.icrcOffset();
        Icrc.write(f, icrc, new Icrc().compute(f, EthernetHeader.LENGTH, 4, Ipv4Header.LENGTH, icrc));
    }

    // ---- the attacker's hands: python3 with a raw AF_PACKET socket in a namespace

    private static void writeFrames(final Path file, final List<byte[]> frames) throws IOException
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes))
        {
            for (final byte[] frame : frames)
            {
                out.writeShort(frame.length);
                out.write(frame);
            }
        }
        Files.write(file, bytes.toByteArray());
    }

    private static List<byte[]> sniff(final String netns, final String iface, final String source, final int count)
        throws Exception
    {
        final List<byte[]> frames = new ArrayList<>();
        for (final String line : python(netns, SNIFFER, iface, source, Integer.toString(count)).split("\n"))
        {
            if (!line.isBlank())
            {
                frames.add(HexFormat.of().parseHex(line.strip()));
            }
        }
        return frames;
    }

    private static String python(final String netns, final String script, final String... arguments) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", netns, "/usr/bin/python3", "-c", script));
        command.addAll(List.of(arguments));
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "python ended");
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    // ---- the serving NIC's counters, read as spraynic stat reads them

    private static Map<String, Long> counters(final Path file)
    {
        try (CountersFileReader reader = CountersFileReader.open(file))
        {
            final Map<String, Long> values = new HashMap<>();
            for (final CountersFileReader.Counter counter : reader.read())
            {
                values.merge(counter.label(), counter.value(), Long::sum);
            }
            return values;
        }
    }

    private static long sum(final Map<String, Long> counters, final String suffix)
    {
        long total = 0;
        for (final Map.Entry<String, Long> e : counters.entrySet())
        {
            if (e.getKey().endsWith(suffix))
            {
                total += e.getValue();
            }
        }
        return total;
    }

    private static long delta(final Map<String, Long> before, final Map<String, Long> after, final String suffix)
    {
        return sum(after, suffix) - sum(before, suffix);
    }

    private static String relevant(final Map<String, Long> before, final Map<String, Long> after)
    {
        final StringBuilder sb = new StringBuilder();
        for (final Map.Entry<String, Long> e : after.entrySet())
        {
            final long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            if (d != 0 && e.getKey().startsWith("worker") && !e.getKey().contains("rx frames") &&
                !e.getKey().contains("parse roce"))
            {
                sb.append(e.getKey()).append('=').append(d).append("; ");
            }
        }
        return sb.toString();
    }

    // ---- processes

    private static String await(final Path output, final Predicate<String> condition, final int seconds, final String what)
        throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        String text = "";
        while (System.nanoTime() < deadline)
        {
            text = Files.exists(output) ? Files.readString(output) : "";
            if (condition.test(text))
            {
                return text;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("timed out waiting: " + what + ": " + text);
    }

    private static Set<String> connectionLabels(final Map<String, Long> counters)
    {
        return counters.keySet().stream().filter(label -> label.startsWith("conn "))
            .map(label -> label.substring(0, label.indexOf(':') + 1)).collect(Collectors.toSet());
    }
}
