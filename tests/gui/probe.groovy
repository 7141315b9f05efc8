// GUI probe for the GUI tests: JMeter runs this file at start-up when started with
//   -Jjsr223.init.file=tests/gui/probe.groovy -Jgui.probe.dir=DIR
// (JMeter's own hook, run after its main window exists). It answers one request at a time through files, so a
// shell test can drive JMeter's real GUI and read what a user would see:
//   the test writes DIR/req (one line: a command), the probe deletes it, runs it on Swing's event thread and
//   writes DIR/res ("ok" or "error: why" on the first line, then the answer's lines).
// Commands:
//   open PATH        load the plan PATH in place of the current one (as File > Open does, without the dialog)
//   tree             every node of the test plan tree, depth first: "depth|name|test element class|GUI class"
//   expand           expand every node of the tree (as on screen after clicking every arrow)
//   select NAME      select the first tree node named NAME (as a click on it does: JMeter shows its form)
//   form             what the selected element's form shows: "kind|text" per label, border title, check box,
//                    text field, combo box (selection and choices) and table header/cell; passwords are not read
//   reveal TEXT      scroll the selected element's form so that the label TEXT (and what follows it) is on screen
//   save PATH        write the plan as the GUI holds it (the form being edited included) to PATH, as File > Save
//                    As does, without the dialog (for save / reopen / run round trips)
//   title            the main window's title
//   menu CATEGORY    the entries of the Add submenu CATEGORY (samplers or config_elements), one a line
//   exit             end JMeter (as File > Exit without the save prompt)
// Nothing here changes the plan: it only reads the GUI, selects tree nodes, saves a copy, and exits.
import javax.swing.*
import javax.swing.border.TitledBorder
import javax.swing.tree.TreePath
import java.awt.Component
import java.awt.Container
import org.apache.jmeter.gui.GuiPackage

def dir = new File(props.getProperty("gui.probe.dir") ?: ".")
dir.mkdirs()

def onEdt = { Closure c ->
    def result = null
    SwingUtilities.invokeAndWait { result = c() }
    result
}

// every node with its depth, depth first (the order of the tree on screen once expanded)
def nodes = {
    def out = []
    def walk
    walk = { node, int depth ->
        out << [depth, node]
        for (int i = 0; i < node.childCount; i++) walk(node.getChildAt(i), depth + 1)
    }
    walk(GuiPackage.instance.treeModel.root, 0)
    out.findAll { it[0] > 0 } // the invisible root holds the Test Plan
}

def clean = { s -> (s == null ? "" : s.toString()).replaceAll(/[\r\n]+/, " ") }

def formLines = { Component top ->
    def lines = []
    def visit
    visit = { Component c ->
        if (!c.visible) return
        if (c instanceof JComponent && c.border instanceof TitledBorder) lines << "border|" + clean(c.border.title)
        switch (c) {
            case JPasswordField: lines << "password|(not read)"; break
            case JCheckBox: lines << "checkbox|" + clean(c.text) + "=" + c.selected; break
            case JLabel:
                if (c.text) lines << "label|" + clean(c.text)
                if (c.text && c.toolTipText) lines << "tooltip|" + clean(c.text) + "|" + clean(c.toolTipText)
                break
            case JTextArea: lines << "textarea|" + clean(c.text); break
            case JTextField: lines << "field|" + clean(c.text); break
            case JComboBox:
                def items = (0..<c.itemCount).collect { clean(c.getItemAt(it)) }
                lines << "combo|" + clean(c.selectedItem) + "|" + items.join(";")
                break
            case JTable:
                def cols = (0..<c.columnCount).collect { clean(c.getColumnName(it)) }
                lines << "table-header|" + cols.join(";")
                for (int r = 0; r < c.rowCount; r++)
                    lines << "table-row|" + (0..<c.columnCount).collect { clean(c.getValueAt(r, it)) }.join(";")
                break
        }
        if (c instanceof Container && !(c instanceof JComboBox) && !(c instanceof JTable))
            c.components.each { visit(it) }
    }
    visit(top)
    lines
}

def commands = [
    open  : { arg ->
        def file = new File(arg)
        if (!file.file) throw new IllegalArgumentException("no plan file ${arg}")
        // Load.loadProjectFile is what File > Open calls once the file is chosen (package-private in 5.6.3)
        onEdt { org.apache.jmeter.gui.action.Load.loadProjectFile(new java.awt.event.ActionEvent(file, 0, "open"), file, false) }
        onEdt { null } // let the actions it queued (tree update, title) run
        ["opened ${arg}"]
    },
    tree  : { arg ->
        onEdt {
            nodes().collect { d, n ->
                "${d}|${clean(n.name)}|${n.testElement.getClass().name}|${n.testElement.getPropertyAsString('TestElement.gui_class')}"
            }
        }
    },
    expand: { arg ->
        onEdt {
            def tree = GuiPackage.instance.treeListener.JTree
            for (int i = 0; i < tree.rowCount; i++) tree.expandRow(i) // rowCount grows as rows open
            ["${tree.rowCount} rows"]
        }
    },
    select: { arg ->
        def found = onEdt {
            def hit = nodes().find { d, n -> n.name == arg }
            if (hit == null) return false
            def tree = GuiPackage.instance.treeListener.JTree
            def path = new TreePath(hit[1].path)
            tree.expandPath(path.parentPath)
            tree.setSelectionPath(path)
            tree.scrollPathToVisible(path)
            true
        }
        if (!found) throw new IllegalArgumentException("no tree node named '${arg}'")
        onEdt { null } // the EDIT action that shows the form was queued behind the selection: let it run
        onEdt { null }
        ["selected ${arg}"]
    },
    form  : { arg -> onEdt { formLines((Component) GuiPackage.instance.currentGui) } },
    title : { arg -> onEdt { [GuiPackage.instance.mainFrame.title] } },
    reveal: { arg ->
        def shown = onEdt {
            def find
            find = { Component c ->
                if (c instanceof JLabel && clean(c.text) == arg) return c
                if (c instanceof Container) for (child in c.components) { def hit = find(child); if (hit) return hit }
                null
            }
            JLabel label = find((Component) GuiPackage.instance.currentGui)
            if (label == null) return false
            // the label's group to the top of the form's viewport: its fields show below it
            def viewport = SwingUtilities.getAncestorOfClass(JViewport, label)
            if (viewport == null) return true // the whole form fits: nothing to scroll
            def at = SwingUtilities.convertPoint(label.parent, label.location, viewport.view)
            int bottom = (int) (viewport.view.height - viewport.extentSize.height)
            viewport.viewPosition = new java.awt.Point(0, Math.max(0, Math.min((int) at.y - 30, bottom)))
            true
        }
        if (!shown) throw new IllegalArgumentException("no label '${arg}' in the form")
        onEdt { null } // repaint
        ["revealed ${arg}"]
    },
    // the entries of one Add submenu (samplers, config_elements: MenuFactory's categories), as Add > ... lists them
    menu  : { arg ->
        def category = [samplers: org.apache.jmeter.gui.util.MenuFactory.SAMPLERS,
                        config_elements: org.apache.jmeter.gui.util.MenuFactory.CONFIG_ELEMENTS][arg]
        if (!category) throw new IllegalArgumentException("menu needs samplers or config_elements")
        onEdt {
            def menu = org.apache.jmeter.gui.util.MenuFactory.makeMenu(category, "Add")
            (0..<menu.itemCount).collect { menu.getItem(it)?.text }.findAll { it }
        }
    },
    save  : { arg ->
        if (!arg) throw new IllegalArgumentException("save needs a file name")
        onEdt {
            def gui = GuiPackage.instance
            gui.updateCurrentNode() // the open form's values into its element, as Save does
            def tree = gui.treeModel.testPlan
            // tree nodes -> their test elements (what Save's convertSubTree does)
            def convert
            convert = { t ->
                for (item in new ArrayList(t.list())) {
                    convert(t.getTree(item))
                    t.replaceKey(item, item.testElement)
                }
            }
            convert(tree)
            new File(arg).withOutputStream { org.apache.jmeter.save.SaveService.saveTree(tree, it) }
            ["saved ${arg}"]
        }
    },
]

def thread = new Thread({
    def req = new File(dir, "req")
    while (true) {
        if (!req.exists()) { Thread.sleep(100); continue }
        def line = req.text.trim()
        req.delete()
        def (cmd, arg) = line.contains(" ") ? [line.substring(0, line.indexOf(' ')), line.substring(line.indexOf(' ') + 1)] : [line, ""]
        if (cmd == "exit") {
            new File(dir, "res").text = "ok\n"
            System.exit(0)
        }
        def text
        try {
            def c = commands[cmd]
            if (c == null) throw new IllegalArgumentException("unknown command '${cmd}'")
            text = "ok\n" + c(arg).join("\n") + "\n"
        } catch (Throwable t) {
            text = "error: " + clean(t.toString()) + "\n"
        }
        def tmp = new File(dir, "res.tmp")
        tmp.text = text
        tmp.renameTo(new File(dir, "res"))
    }
} as Runnable, "gui-test-probe")
thread.daemon = true
thread.start()
log.info("GUI test probe answering in {}", dir)
