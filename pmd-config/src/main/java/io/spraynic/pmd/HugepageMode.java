package io.spraynic.pmd;

import java.util.Locale;

/**
 * Whether EAL runs from hugepages: {@link #AUTO} when the host has them (enough free 2 MiB pages and a mounted
 * hugetlbfs), else without; {@link #ON} or refuse to start; {@link #OFF}, {@code --no-huge} whatever the host has.
 */
public enum HugepageMode
{
    AUTO, ON, OFF;

    /** @return the name as the command line and the TOML take it: auto, on, off. */
    public String text()
    {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param text auto, on or off.
     * @return the mode.
     * @throws IllegalArgumentException naming the three.
     */
    public static HugepageMode parse(final String text)
    {
        for (final HugepageMode mode : values())
        {
            if (mode.text().equals(text))
            {
                return mode;
            }
        }
        throw new IllegalArgumentException("hugepages \"" + text + "\" is not one of auto, on, off");
    }
}
