package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

/** {@link BenchCaptureCommandTest}'s check on {@code --workload rocev2}, in a JVM (an EAL) of its own. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BenchCaptureRocev2CommandTest
{
    @Test
    void shouldCaptureEveryFrameOfRocev2TransfersAndVerifyThem()
    {
        BenchCaptureCommandTest.assertCapturesEveryFrame("rocev2");
    }
}
