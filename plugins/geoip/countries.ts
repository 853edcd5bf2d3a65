/**
 * Country and continent names for databases that only store the ISO 3166-1 country code (DB-IP's
 * lite layout). Continents follow GeoNames, as MaxMind does; country names are CLDR's English
 * names with GeoNames' spelling where the two differ, so a filter on `$geoip_country_name` reads
 * the same whichever database the operator runs.
 */
const CONTINENT_NAMES: Readonly<Record<string, string>> = {
  AF: 'Africa',
  AN: 'Antarctica',
  AS: 'Asia',
  EU: 'Europe',
  NA: 'North America',
  OC: 'Oceania',
  SA: 'South America',
}

const COUNTRIES_BY_CONTINENT: Readonly<Record<string, string>> = {
  AF: 'AO BF BI BJ BW CD CF CG CI CM CV DJ DZ EG EH ER ET GA GH GM GN GQ GW KE KM LR LS LY MA MG ML MR MU MW MZ NA NE NG RE RW SC SD SH SL SN SO SS ST SZ TD TG TN TZ UG YT ZA ZM ZW',
  AN: 'AQ BV GS HM TF',
  AS: 'AE AF AM AZ BD BH BN BT CC CN CX GE HK ID IL IN IO IQ IR JO JP KG KH KP KR KW KZ LA LB LK MM MN MO MV MY NP OM PH PK PS QA SA SG SY TH TJ TM TR TW UZ VN YE',
  EU: 'AD AL AT AX BA BE BG BY CH CY CZ DE DK EE ES FI FO FR GB GG GI GR HR HU IE IM IS IT JE LI LT LU LV MC MD ME MK MT NL NO PL PT RO RS RU SE SI SJ SK SM UA VA XK',
  NA: 'AG AI AW BB BL BM BQ BS BZ CA CR CU CW DM DO GD GL GP GT HN HT JM KN KY LC MF MQ MS MX NI PA PM PR SV SX TC TT US VC VG VI',
  OC: 'AS AU CK FJ FM GU KI MH MP NC NF NR NU NZ PF PG PN PW SB TK TL TO TV UM VU WF WS',
  SA: 'AR BO BR CL CO EC FK GF GY PE PY SR UY VE',
}

const CONTINENT_OF: ReadonlyMap<string, string> = new Map(
  Object.entries(COUNTRIES_BY_CONTINENT).flatMap(([continent, codes]) =>
    codes.split(' ').map((code) => [code, continent] as const),
  ),
)

/** Where GeoNames (and so MaxMind) spells a country differently from CLDR. */
const GEONAMES_SPELLING: Readonly<Record<string, string>> = {
  BQ: 'Bonaire, Sint Eustatius, and Saba',
  AX: 'Åland',
  CD: 'DR Congo',
  CG: 'Congo Republic',
  CI: 'Ivory Coast',
  CV: 'Cabo Verde',
  FM: 'Federated States of Micronesia',
  HK: 'Hong Kong',
  MM: 'Myanmar',
  MO: 'Macao',
  PS: 'Palestine',
  UM: 'U.S. Outlying Islands',
  XK: 'Kosovo',
}

const cldrNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' })

export interface CountryInfo {
  readonly countryName?: string
  readonly continentCode?: string
  readonly continentName?: string
}

/** One entry per known code: the lookup path asks for the same few hundred codes all day. */
const INFO: ReadonlyMap<string, CountryInfo> = new Map(
  [...CONTINENT_OF].map(([code, continentCode]) => {
    const countryName =
      GEONAMES_SPELLING[code] ??
      cldrNames
        .of(code)
        ?.replaceAll(' & ', ' and ')
        .replace(/^St\. /, 'Saint ')
    return [code, Object.freeze({ countryName, continentCode, continentName: CONTINENT_NAMES[continentCode] })]
  }),
)
const UNKNOWN: CountryInfo = Object.freeze({})

/** Names for an ISO 3166-1 alpha-2 code; empty for codes that are not countries (`ZZ`, `EU`). */
export function countryInfo(code: string): CountryInfo {
  return INFO.get(code) ?? UNKNOWN
}
