import com.sun.source.tree.*;
import com.sun.source.util.*;
import java.io.*;
import java.nio.file.*;
import java.util.*;
import javax.lang.model.element.*;
import javax.tools.*;

/**
 * javac's own resolution of every call into the sources under a folder: method calls,
 * super(...)/this(...) and `new X(...)` of a constructor the sources declare. Prints one
 * "F\tfile" line per source file, then per call "E\tcaller file\tcall line\tcallee file\t
 * callee first line\tcallee last line\tcallee name" (paths relative to the folder; a
 * constructor's name is its class's). Run: java CallEdges.java ROOT [CLASSPATH].
 */
public class CallEdges {
    public static void main(String[] args) throws Exception {
        Path root = Paths.get(args[0]).toAbsolutePath().normalize();
        List<File> files = new ArrayList<>();
        try (var walk = Files.walk(root)) {
            walk.filter(p -> p.toString().endsWith(".java") && !p.toString().contains("/.planning/"))
                .sorted().forEach(p -> files.add(p.toFile()));
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StandardJavaFileManager fm = javac.getStandardFileManager(null, null, null);
        List<String> options = new ArrayList<>(List.of("-proc:none", "-Xmaxerrs", "0", "-implicit:none"));
        if (args.length > 1 && !args[1].isEmpty()) options.addAll(List.of("-cp", args[1]));
        JavacTask task = (JavacTask) javac.getTask(new StringWriter(), fm, d -> {}, options, null,
            fm.getJavaFileObjectsFromFiles(files));
        Iterable<? extends CompilationUnitTree> units = task.parse();
        task.analyze();
        Trees trees = Trees.instance(task);
        SourcePositions positions = trees.getSourcePositions();
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out));
        for (File f : files) out.println("F\t" + root.relativize(f.toPath().toAbsolutePath().normalize()));
        for (CompilationUnitTree unit : units) {
            String file = root.relativize(Paths.get(unit.getSourceFile().toUri())).toString();
            new TreePathScanner<Void, Void>() {
                void edge(Tree node) {
                    Element e = trees.getElement(getCurrentPath());
                    if (!(e instanceof ExecutableElement)) return;
                    TreePath def = trees.getPath(e);
                    if (def == null) return;
                    CompilationUnitTree target = def.getCompilationUnit();
                    long start = positions.getStartPosition(target, def.getLeaf());
                    long end = positions.getEndPosition(target, def.getLeaf());
                    if (start < 0 || end < 0) return;
                    String name = e.getSimpleName().toString();
                    if (name.equals("<init>")) name = e.getEnclosingElement().getSimpleName().toString();
                    long line = unit.getLineMap().getLineNumber(positions.getStartPosition(unit, node));
                    out.println("E\t" + file + "\t" + line + "\t"
                        + root.relativize(Paths.get(target.getSourceFile().toUri())) + "\t"
                        + target.getLineMap().getLineNumber(start) + "\t"
                        + target.getLineMap().getLineNumber(end) + "\t" + name);
                }
                @Override public Void visitMethodInvocation(MethodInvocationTree node, Void v) {
                    edge(node);
                    return super.visitMethodInvocation(node, v);
                }
                @Override public Void visitNewClass(NewClassTree node, Void v) {
                    edge(node);
                    return super.visitNewClass(node, v);
                }
            }.scan(unit, null);
        }
        out.flush();
    }
}
