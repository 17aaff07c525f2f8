// A class loaded before a late attach but linked only after it: the agent
// cannot check such a class's resource at attach (JVMTI lists no methods
// before preparation) and does so at its ClassPrepare.
//   java LateLink GOFILE    loads LateLink$Later without linking it, waits
//                           for GOFILE to exist, then runs Later.work()
import java.nio.file.Files;
import java.nio.file.Path;

public class LateLink {
    static class Later {
        static int work(int n) {
            int s = 0;
            for (int i = 0; i < n; i++)
                s += i % 7 == 0 ? i : 1;
            return s;
        }
    }

    public static void main(String[] args) throws Exception {
        Class<?> c = Class.forName("LateLink$Later", false,
                                   LateLink.class.getClassLoader());
        System.out.println("loaded " + c.getName());
        Path go = Path.of(args[0]);
        long end = System.nanoTime() + 30_000_000_000L;
        while (!Files.exists(go) && System.nanoTime() < end)
            Thread.sleep(20);
        System.out.println("LateLink work=" + Later.work(1000));
    }
}
