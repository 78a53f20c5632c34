/**
 * Offline stand-ins for PubMed, UniProt and arXiv, so the examples run without network: a loopback server
 * from `sciencegate/testing` serving the invented records in ./fixtures the way NCBI, rest.uniprot.org
 * and the arXiv API answer, and the `SCIENCEGATE_<SOURCE>_BASE_URL` variables that point the bundled
 * sources at it. Every PubMed search finds the same two invented papers and every UniProt search the
 * same BRAF page; lookups by id return the matching invented records; every arXiv query answers with the
 * one invented preprint 2403.01234v2 (CC BY 4.0). The other sources keep their real addresses.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type FakeProviderServer,
  type FakeRoute,
  providerEnvFor,
  startFakeProviderServer,
} from "sciencegate/testing";

const FIXTURES = join(import.meta.dirname, "fixtures");
const fixture = (name: string) => join(FIXTURES, name);
const JSON_TYPE = { "content-type": "application/json" };

/** The routes, under the paths `providerEnvFor` assigns: `/<source>/<endpoint>/<provider path>`. */
export function offlineRoutes(): FakeRoute[] {
  return [
    { path: "/pubmed/eutils/esearch.fcgi", file: fixture("esearch-crispr.json") },
    { path: "/pubmed/eutils/efetch.fcgi", handler: (request) => efetch(request.query.get("id") ?? "") },
    {
      path: "/uniprot/rest/uniprotkb/search",
      headers: { ...JSON_TYPE, "x-total-results": "2" },
      file: fixture("search-braf.json"),
    },
    {
      path: "/uniprot/rest/uniprotkb/accessions",
      handler: (request) => accessions(request.query.get("accessions") ?? ""),
    },
    {
      path: "/arxiv/api/query",
      headers: { "content-type": "application/atom+xml; charset=utf-8" },
      file: fixture("arxiv-2403.01234.atom"),
    },
  ];
}

/**
 * Starts the offline providers on 127.0.0.1.
 * @returns the server (close it when done) and the variables to pass as `createGovernance({ env })`
 */
export async function startOfflineProviders(): Promise<{
  server: FakeProviderServer;
  env: Record<string, string>;
}> {
  const server = await startFakeProviderServer({ routes: offlineRoutes() });
  const env = Object.fromEntries(
    Object.entries(providerEnvFor(server.url)).filter(([name]) => /_(PUBMED|UNIPROT|ARXIV)_/.test(name)),
  );
  return { server, env };
}

/** Like EFetch: the articles of the library whose PMID was asked for, in library order. */
async function efetch(ids: string): Promise<{ body: string; headers: Record<string, string> }> {
  const wanted = new Set(ids.split(","));
  const library = await readFile(fixture("efetch-library.xml"), "utf8");
  const header = library.slice(0, library.indexOf("<PubmedArticleSet>"));
  const articles = library.match(/<Pubmed(?:Book)?Article>[\s\S]*?<\/Pubmed(?:Book)?Article>/g) ?? [];
  const kept = articles.filter((article) => wanted.has(/<PMID[^>]*>(\d+)<\/PMID>/.exec(article)?.[1] ?? ""));
  return {
    body: `${header}<PubmedArticleSet>\n${kept.join("\n")}\n</PubmedArticleSet>\n`,
    headers: { "content-type": "text/xml; charset=utf-8" },
  };
}

/** Like the accessions endpoint: the invented entries asked for, by primary or secondary accession. */
async function accessions(list: string): Promise<{ body: string; headers: Record<string, string> }> {
  const wanted = list.split(",");
  const library = JSON.parse(await readFile(fixture("entries-library.json"), "utf8")) as {
    results: { primaryAccession: string; secondaryAccessions?: string[] }[];
  };
  const results = library.results.filter(
    (entry) =>
      wanted.includes(entry.primaryAccession) ||
      (entry.secondaryAccessions ?? []).some((secondary) => wanted.includes(secondary)),
  );
  return { headers: JSON_TYPE, body: JSON.stringify({ results }) };
}
