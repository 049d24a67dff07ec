package io.spraynic.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * For tests that run NICs in network namespaces: awaiting two of them. The namespaces themselves, their links and
 * the commands that build them: {@link io.spraynic.datapath.port.TestNetwork}.
 */
final class NetnsTestSupport
{
    private NetnsTestSupport()
    {
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
