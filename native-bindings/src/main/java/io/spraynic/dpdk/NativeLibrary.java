package io.spraynic.dpdk;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Loads {@code libspraynic_shim.so} once per JVM. The shim links every DPDK library, so after it
 * is loaded the jextract bindings resolve {@code rte_*} symbols through the loader lookup.
 * <p>
 * The shim comes from {@code -Dspraynic.shim.path=FILE} when set, else from the jar (extracted to
 * a temporary file, since {@code dlopen} needs a path).
 */
public final class NativeLibrary
{
    /** System property that names a shim to load instead of the one packaged in the jar. */
    public static final String SHIM_PATH_PROPERTY = "spraynic.shim.path";

    static final String RESOURCE = "/native/linux-x86_64/libspraynic_shim.so";

    private static volatile Path loadedFrom;

    private NativeLibrary()
    {
    }

    /**
     * Loads the shim (and through it DPDK) if not loaded yet, then checks the shim's layout probes
     * against the jextract layouts.
     *
     * @return the path the shim was loaded from.
     * @throws IllegalStateException with one sentence saying what is missing and how to fix it.
     */
    public static Path load()
    {
        Path path = loadedFrom;
        if (null == path)
        {
            synchronized (NativeLibrary.class)
            {
                path = loadedFrom;
                if (null == path)
                {
                    path = locateShim();
                    try
                    {
                        System.load(path.toString());
                    }
                    catch (final UnsatisfiedLinkError ex)
                    {
                        throw new IllegalStateException(explainLinkError(path, ex), ex);
                    }
                    ShimLayoutCheck.verify();
                    loadedFrom = path;
                }
            }
        }
        return path;
    }

    private static Path locateShim()
    {
        final String override = System.getProperty(SHIM_PATH_PROPERTY);
        if (null != override)
        {
            final Path path = Path.of(override).toAbsolutePath();
            if (!Files.isReadable(path))
            {
                throw new IllegalStateException(
                    "-D" + SHIM_PATH_PROPERTY + "=" + override + " does not name a readable file; " +
                    "point it at libspraynic_shim.so or remove it to use the one in the jar");
            }
            return path;
        }

        try (InputStream in = NativeLibrary.class.getResourceAsStream(RESOURCE))
        {
            if (null == in)
            {
                throw new IllegalStateException(
                    "libspraynic_shim.so is not on the classpath (" + RESOURCE + "); " +
                    "build the project with ./mvnw package, which compiles the shim against DPDK");
            }
            final Path dir = Files.createTempDirectory("spraynic-shim");
            final Path file = dir.resolve("libspraynic_shim.so");
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            file.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            return file;
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot extract libspraynic_shim.so: " + ex.getMessage(), ex);
        }
    }

    static String explainLinkError(final Path path, final UnsatisfiedLinkError ex)
    {
        final String message = String.valueOf(ex.getMessage());
        if (message.contains("librte_"))
        {
            return "DPDK's runtime libraries are not installed (" + firstLine(message) + "); " +
                "install them with: apt-get install -y dpdk";
        }
        return "cannot load " + path + ": " + firstLine(message);
    }

    private static String firstLine(final String text)
    {
        final int newline = text.indexOf('\n');
        return newline < 0 ? text : text.substring(0, newline);
    }
}
