package io.spraynic.cli;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two {@code spraynic transfer} processes on the {@code udp} preset, 127.0.0.1 and 127.0.0.2 on loopback: kernel UDP
 * sockets, as any container could run them (no namespace, no root needed, no EAL started), exchange a verified
 * transfer both ways in spray and in RoCEv2 mode. The same over IPv6, both on {@code ::1} (loopback's one IPv6
 * address) on two UDP ports, each sending to the other's.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class TransferUdpTest
{
    @ParameterizedTest
    @ValueSource(strings = {"spray", "rocev2"})
    void shouldExchangeAVerifiedTransferBothWaysOverUdpSockets(final String mode, @TempDir final Path dir) throws Exception
    {
        final int port = 20_000 + new SplittableRandom().nextInt(40_000);
        exchange(mode, dir, "127.0.0.2", port, port, "127.0.0.1", port, port);
    }

    @ParameterizedTest
    @ValueSource(strings = {"spray", "rocev2"})
    void shouldExchangeAVerifiedTransferBothWaysOverIpv6UdpSockets(final String mode, @TempDir final Path dir)
        throws Exception
    {
        final int port = 20_000 + new SplittableRandom().nextInt(40_000);
        exchange(mode, dir, "::1", port, port + 1, "::1", port + 1, port);
    }

    private static void exchange(final String mode, final Path dir, final String serverIp, final int serverPort,
        final int serverPeerPort, final String clientIp, final int clientPort, final int clientPeerPort) throws Exception
    {
        final Path exchange = Files.createDirectory(dir.resolve("exchange"));
        final Process server = start(mode, "server", serverIp, serverPort, serverPeerPort, exchange, dir.resolve("server.out"));
        final Process client = start(mode, "client", clientIp, clientPort, clientPeerPort, exchange, dir.resolve("client.out"));
        try
        {
            final boolean clientDone = client.waitFor(180, TimeUnit.SECONDS);
            final boolean serverDone = server.waitFor(30, TimeUnit.SECONDS);
            final String clientOut = Files.readString(dir.resolve("client.out"));
            final String serverOut = Files.readString(dir.resolve("server.out"));
            assertTrue(clientDone && serverDone, "both ended in time; client: " + clientOut + " server: " + serverOut);
            assertEquals(0, client.exitValue(), clientOut + " SERVER: " + serverOut);
            assertEquals(0, server.exitValue(), serverOut);
            for (final String out : List.of(clientOut, serverOut))
            {
                assertTrue(out.contains("\"verified\":true"), out);
                assertTrue(out.contains("\"mode\":\"" + mode + "\""), out);
                assertTrue(out.contains("\"bytes\":" + (4 << 20)), out);
                assertFalse(out.contains("EAL"), "no DPDK start-up at all: " + out);
            }
        }
        finally
        {
            client.destroyForcibly();
            server.destroyForcibly();
        }
    }

    private static Process start(final String mode, final String role, final String ip, final int port, final int peerPort,
        final Path exchange, final Path output) throws IOException
    {
        return new ProcessBuilder(CliTestSupport.javaCommand(List.of("transfer", "--config", "udp", "-p", "ip=" + ip,
            "-p", "port=" + port, "-p", "peer_port=" + peerPort, "--mode", mode, "--role", role, "--ip", ip,
            "--exchange", exchange.toString(), "--size", "4m", "--timeout", "60", "--idle", "backoff", "--json",
            // RC gives up after 8 ACK time-outs: 67 ms each by default, less than a starved JVM (a loaded CI host,
            // two JVMs warming up) may take to answer; 1 s each here
            "--rocev2-ack-timeout", "18")))
            .redirectErrorStream(true).redirectOutput(output.toFile()).start();
    }
}
