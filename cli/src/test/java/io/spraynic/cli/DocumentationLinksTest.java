package io.spraynic.cli;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README and docs stand alone: every relative link and image in the project's Markdown names a file inside the
 * repository that exists, and no text points a reader at files beside the repository.
 */
class DocumentationLinksTest
{
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

    @Test
    void everyRelativeLinkStaysInsideTheRepositoryAndResolves() throws IOException
    {
        final List<String> problems = new ArrayList<>();
        final List<Path> markdown;
        try (Stream<Path> files = Files.walk(ROOT))
        {
            markdown = files.filter(p -> p.toString().endsWith(".md"))
                .filter(p -> !ROOT.relativize(p).toString().contains("target/"))
                .filter(p -> !ROOT.relativize(p).startsWith(".git")).toList();
        }
        assertTrue(markdown.size() >= 3, "found " + markdown);
        for (final Path file : markdown)
        {
            final String text = Files.readString(file);
            if (text.contains("../shared") || text.contains("shared/BRIEF"))
            {
                problems.add(ROOT.relativize(file) + ": refers to files outside the repository (shared/)");
            }
            final Matcher link = LINK.matcher(text);
            while (link.find())
            {
                final String target = link.group(1);
                if (target.startsWith("http://") || target.startsWith("https://") || target.startsWith("#") ||
                    target.startsWith("mailto:"))
                {
                    continue;
                }
                final String path = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
                final Path resolved = file.getParent().resolve(path).normalize();
                if (!resolved.startsWith(ROOT))
                {
                    problems.add(ROOT.relativize(file) + ": link leaves the repository: " + target);
                }
                else if (!Files.exists(resolved))
                {
                    problems.add(ROOT.relativize(file) + ": link to a missing file: " + target);
                }
            }
        }
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }
}
