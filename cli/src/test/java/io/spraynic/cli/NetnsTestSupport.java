package io.spraynic.cli;

import io.spraynic.datapath.port.TestNetwork;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * For tests that run NICs in network namespaces: starting and awaiting them. The namespaces themselves, their links
 * and the commands that build them: {@link TestNetwork}.
 */
final class NetnsTestSupport
{
    private NetnsTestSupport()
    {
    }

    /**
     * Starts {@code spraynic transfer} in namespace {@code ns} on {@code net_af_packet} over {@code veth}, given its
     * address and gateway only (the peer's comes through {@code exchange}): 4 MiB each way, one JSON line.
     *
     * @param ip      its address with prefix, e.g. {@code 10.97.1.10/24}.
     * @param gateway its router's address.
     */
    static Process startRoutedTransfer(final String ns, final String veth, final String role, final String ip,
        final String gateway, final Path exchange, final Path output) throws IOException
    {
        final List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", ns));
        command.addAll(CliTestSupport.javaCommand(List.of("transfer", "--config", "net_af_packet", "-p", "iface=" + veth,
            "-p", "file_prefix=spraynic-route-" + ns + "-" + role, "--role", role, "--ip", ip, "--gateway", gateway,
            "--exchange", exchange.toString(), "--size", "4m", "--timeout", "60", "--json")));
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
    }

    /**
     * Waits for two {@code spraynic transfer} processes that exchange with each other (the client first, up to 180 s,
     * then the server, 30 s more) and checks that both ended with exit code 0.
     *
     * @return the client's output and the server's.
     */
    static List<String> awaitTransferPair(final Process client, final Path clientOutput, final Process server,
        final Path serverOutput) throws IOException, InterruptedException
    {
        final boolean clientDone = client.waitFor(180, TimeUnit.SECONDS);
        final boolean serverDone = server.waitFor(30, TimeUnit.SECONDS);
        final String clientOut = Files.readString(clientOutput);
        final String serverOut = Files.readString(serverOutput);
        assertTrue(clientDone && serverDone, "both ended in time; client: " + clientOut + " server: " + serverOut);
        assertEquals(0, client.exitValue(), clientOut + " SERVER: " + serverOut);
        assertEquals(0, server.exitValue(), serverOut);
        return List.of(clientOut, serverOut);
    }
}
