package io.spraynic.deploy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the deployment files say, read from the files themselves, so that the tests hold the container image, its
 * runner, the Kubernetes manifests and the systemd unit to one another: the image's name, tag, user and entrypoint,
 * and the capabilities a NIC gets. Also runs the tools the tests drive.
 */
final class DeployFiles
{
    static final Path REPO = Path.of("..").toAbsolutePath().normalize();
    static final Path CONTAINER = REPO.resolve("deploy/container");
    static final Path KUBERNETES = REPO.resolve("deploy/kubernetes");
    /** The two capabilities a NIC needs (af_packet, pcap, mlx5, tap, promiscuous mode, XDP), without CAP_. */
    static final Set<String> NIC_CAPABILITIES = Set.of("NET_RAW", "NET_ADMIN");

    private DeployFiles()
    {
    }

    record Result(int exitCode, String out, String err)
    {
    }

    /** @return the build's version (pom.xml, through surefire), the tag of the image. */
    static String version()
    {
        final String version = System.getProperty("project.version");
        if (null == version || version.isBlank())
        {
            throw new IllegalStateException("-Dproject.version is not set: run through Maven (deploy/pom.xml sets it)");
        }
        return version;
    }

    /** @return localhost/spraynic:VERSION, as build-image.sh names it. */
    static String image() throws IOException
    {
        return scriptValue(CONTAINER.resolve("build-image.sh"), "image_name=(\\S+)") + ":" + version();
    }

    /** @return the entrypoint build-image.sh gives the image (its --config.entrypoint). */
    static String entrypoint() throws IOException
    {
        return scriptValue(CONTAINER.resolve("build-image.sh"), "--config\\.entrypoint (\\S+)");
    }

    /** @return the user id build-image.sh gives the image (its --config.user UID:GID). */
    static long imageUser() throws IOException
    {
        return Long.parseLong(scriptValue(CONTAINER.resolve("build-image.sh"), "--config\\.user (\\d+):\\d+"));
    }

    /** @return the group id of {@code name} in the image's /etc/group (a build-image.sh customize hook), or -1. */
    static long imageGroupId(final String name) throws IOException
    {
        final Matcher matcher = Pattern.compile("echo \"" + Pattern.quote(name) + ":x:(\\d+):[^\"]*\" >> \"\\$1/etc/group\"")
            .matcher(Files.readString(CONTAINER.resolve("build-image.sh")));
        return matcher.find() ? Long.parseLong(matcher.group(1)) : -1;
    }

    /** @return the capabilities run.sh adds, without CAP_. */
    static Set<String> runScriptCapabilities() throws IOException
    {
        final Matcher matcher = Pattern.compile("--cap-add (?:CAP_)?(\\w+)").matcher(Files.readString(CONTAINER.resolve("run.sh")));
        final Set<String> capabilities = new TreeSet<>();
        while (matcher.find())
        {
            capabilities.add(matcher.group(1));
        }
        return capabilities;
    }

    /** @return the systemd unit's CapabilityBoundingSet, without CAP_. */
    static Set<String> systemdCapabilities() throws IOException
    {
        final String value = scriptValue(REPO.resolve("deploy/systemd/spraynic-nic.service"), "(?m)^CapabilityBoundingSet=(.*)$");
        final Set<String> capabilities = new TreeSet<>();
        for (final String word : value.trim().split("\\s+"))
        {
            capabilities.add(word.replaceFirst("^CAP_", ""));
        }
        return capabilities;
    }

    private static String scriptValue(final Path file, final String regex) throws IOException
    {
        final Matcher matcher = Pattern.compile(regex).matcher(Files.readString(file));
        if (!matcher.find())
        {
            throw new IllegalStateException(file + " has no " + regex);
        }
        return matcher.group(1);
    }

    /** Runs a command to its end or the timeout (then kills it), its output kept apart. */
    static Result run(final long timeoutSeconds, final List<String> command) throws IOException, InterruptedException
    {
        final Path out = Files.createTempFile("spraynic-deploy-out", ".txt");
        final Path err = Files.createTempFile("spraynic-deploy-err", ".txt");
        try
        {
            final Process process = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS))
            {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException(String.join(" ", command) + " took more than " + timeoutSeconds + " s: " +
                    Files.readString(err, StandardCharsets.UTF_8));
            }
            return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
        }
        finally
        {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    static Result run(final long timeoutSeconds, final String... command) throws IOException, InterruptedException
    {
        return run(timeoutSeconds, List.of(command));
    }

    /** @return the executable's path when it is on PATH (or in /usr/sbin, /sbin), else null. */
    static Path onPath(final String name)
    {
        final List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(":")));
        dirs.addAll(List.of("/usr/sbin", "/sbin"));
        for (final String dir : dirs)
        {
            final Path candidate = Path.of(dir.isEmpty() ? "." : dir, name);
            if (Files.isExecutable(candidate))
            {
                return candidate;
            }
        }
        return null;
    }
}
