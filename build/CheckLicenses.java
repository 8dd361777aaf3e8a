// Fails when a component of a CycloneDX SBOM (the Java dependencies a published module ships or
// pulls in at run time) has no license in the allowed list. Run by Maven in `verify`:
//   java build/CheckLicenses.java target/<artifact>-<version>-cyclonedx.xml
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

public class CheckLicenses {
  /** The same list as rust/nativemem/tests/crate_licenses.rs, as SPDX ids. */
  static final Set<String> ALLOWED =
      Set.of(
          "Apache-2.0", "MIT", "BSD-2-Clause", "BSD-3-Clause", "ISC", "Zlib", "BSL-1.0", "CC0-1.0",
          "0BSD");

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: java CheckLicenses.java <sbom.xml>");
      System.exit(2);
    }
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    factory.setNamespaceAware(true);
    factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    Element bom = factory.newDocumentBuilder().parse(new File(args[0])).getDocumentElement();
    List<String> refused = new ArrayList<>();
    int checked = 0;
    NodeList components = bom.getElementsByTagNameNS("*", "components");
    for (int c = 0; c < components.getLength(); c++) {
      Element list = (Element) components.item(c);
      if (list.getParentNode() != bom) {
        continue; // metadata/component or nested ones: not dependencies
      }
      NodeList items = list.getElementsByTagNameNS("*", "component");
      for (int i = 0; i < items.getLength(); i++) {
        Element component = (Element) items.item(i);
        String name = text(component, "group") + ":" + text(component, "name") + ":" + text(component, "version");
        if (name.startsWith("dev.nativemem:")) {
          continue; // ours: Apache-2.0, as LICENSE
        }
        checked++;
        List<String> ids = new ArrayList<>();
        NodeList licenses = component.getElementsByTagNameNS("*", "license");
        for (int l = 0; l < licenses.getLength(); l++) {
          Element license = (Element) licenses.item(l);
          String id = text(license, "id");
          ids.add(id.isEmpty() ? "name: " + text(license, "name") : id);
        }
        if (ids.stream().noneMatch(ALLOWED::contains)) {
          refused.add(name + " " + (ids.isEmpty() ? "(no license)" : ids));
        }
      }
    }
    if (!refused.isEmpty()) {
      System.err.println(
          "Dependencies without an allowed license (" + ALLOWED + ") in " + args[0] + ":");
      refused.forEach(r -> System.err.println("  " + r));
      System.err.println(
          "Replace the dependency, or review its license and add it to ALLOWED in build/CheckLicenses.java.");
      System.exit(1);
    }
    System.out.println("licenses: " + checked + " dependencies, all allowed (" + args[0] + ")");
  }

  private static String text(Element parent, String child) {
    NodeList nodes = parent.getElementsByTagNameNS("*", child);
    for (int i = 0; i < nodes.getLength(); i++) {
      if (nodes.item(i).getParentNode() == parent) {
        return nodes.item(i).getTextContent().trim();
      }
    }
    return "";
  }
}
