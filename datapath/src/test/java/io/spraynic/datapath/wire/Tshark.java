package io.spraynic.datapath.wire;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Runs Wireshark's {@code tshark} on a capture and returns selected fields per frame: the independent
 * dissector our writer's frames are checked against. Heuristic sub-dissectors of InfiniBand payloads
 * (RPC-over-RDMA, iSER, SMB Direct...) are turned off, or they would try to read our test payloads as
 * their protocols and report those as malformed.
 */
public final class Tshark
{
    static final List<String> FIELDS = List.of(
        "frame.number", "vlan.id", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "ip.dsfield.ecn", "ipv6.tclass.ecn",
        "ip.checksum.status", "udp.srcport", "udp.dstport", "udp.length", "udp.checksum.status",
        "infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.m", "infiniband.bth.padcnt",
        "infiniband.bth.tver", "infiniband.bth.p_key", "infiniband.bth.destqp", "infiniband.bth.a",
        "infiniband.bth.psn", "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
        "infiniband.aeth.syndrome", "infiniband.aeth.msn", "infiniband.immdt", "infiniband.invariant.crc",
        "_ws.expert", "_ws.malformed");

    private static final String[] HEURISTICS_OFF = {
        "rpcrdma_infiniband", "iser_infiniband", "sdp_infiniband", "smb_direct_infiniband", "smcr_infiniband",
        "fc_infiniband", "eth_over_ib", "mellanox_eoib", "lnet_ib", "nvme_rdma", "drbd_rdma",
    };

    private static final Pattern TRACEROUTE_GUESS =
        Pattern.compile("Expert Info \\(Chat/Sequence\\): Possible traceroute: hop #\\d+, attempt #\\d+");

    private Tshark()
    {
    }

    /**
     * tshark's UDP dissector calls any port in 33435-33464 "Possible traceroute" (LBL traceroute's ports), a note
     * about the port number alone; kernel-chosen source ports land there now and then, so it is not a finding.
     */
    static String withoutTracerouteGuess(final String expert)
    {
        return TRACEROUTE_GUESS.matcher(expert).replaceAll("").replaceAll("^;+|;+$", "").replaceAll(";;+", ";");
    }

    public static boolean available()
    {
        try
        {
            final Process process = new ProcessBuilder("tshark", "-v").redirectErrorStream(true).start();
            process.getInputStream().readAllBytes();
            return process.waitFor(60, TimeUnit.SECONDS) && process.exitValue() == 0;
        }
        catch (final IOException ex)
        {
            return false;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * @return one map per frame, field name to tshark's text ("" when absent).
     */
    public static List<Map<String, String>> fields(final Path capture, final Path configDir) throws IOException, InterruptedException
    {
        final StringBuilder heuristics = new StringBuilder();
        for (final String name : HEURISTICS_OFF)
        {
            heuristics.append(name).append(",0\n");
        }
        Files.writeString(configDir.resolve("heuristic_protos"), heuristics.toString());
        final List<String> command = new ArrayList<>(List.of("tshark", "-n", "-r", capture.toString(),
            "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
            "-T", "fields", "-E", "separator=|", "-E", "occurrence=a", "-E", "aggregator=;"));
        for (final String field : FIELDS)
        {
            command.add("-e");
            command.add(field);
        }
        final ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().put("WIRESHARK_CONFIG_DIR", configDir.toString());
        final Path stderr = configDir.resolve("stderr.txt");
        builder.redirectError(stderr.toFile());
        final Process process = builder.start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0)
        {
            throw new IOException("tshark failed: " + Files.readString(stderr));
        }
        final List<Map<String, String>> frames = new ArrayList<>();
        for (final String line : output.split("\n"))
        {
            if (line.isEmpty())
            {
                continue;
            }
            final String[] values = line.split("\\|", -1);
            final Map<String, String> frame = new LinkedHashMap<>();
            for (int i = 0; i < FIELDS.size(); i++)
            {
                final String value = i < values.length ? values[i] : "";
                frame.put(FIELDS.get(i), "_ws.expert".equals(FIELDS.get(i)) ? withoutTracerouteGuess(value) : value);
            }
            frames.add(frame);
        }
        return frames;
    }

    /** tshark prints booleans as 1/0 (4.0) or True/False (later versions). */
    static boolean bool(final String value)
    {
        return "1".equals(value) || "True".equalsIgnoreCase(value);
    }

    static long number(final String value)
    {
        return value.startsWith("0x") ? Long.parseUnsignedLong(value.substring(2), 16) : Long.parseLong(value);
    }
}
