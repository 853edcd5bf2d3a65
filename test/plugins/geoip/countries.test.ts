import { expect } from 'chai'
import { countryInfo } from '../../../plugins/geoip/countries.ts'

describe('geoip countries', () => {
  it('gives the English name and GeoNames continent of a country code', () => {
    expect(countryInfo('DE')).to.deep.equal({ countryName: 'Germany', continentCode: 'EU', continentName: 'Europe' })
    expect(countryInfo('US')).to.deep.equal({
      countryName: 'United States',
      continentCode: 'NA',
      continentName: 'North America',
    })
    expect(countryInfo('AU')).to.include({ continentCode: 'OC', continentName: 'Oceania' })
    expect(countryInfo('BR')).to.include({ continentCode: 'SA', continentName: 'South America' })
    expect(countryInfo('AQ')).to.include({ continentCode: 'AN', continentName: 'Antarctica' })
  })

  it('places transcontinental countries where GeoNames does', () => {
    expect(countryInfo('RU').continentCode).to.equal('EU')
    expect(countryInfo('TR').continentCode).to.equal('AS')
    expect(countryInfo('CY').continentCode).to.equal('EU')
    expect(countryInfo('EG').continentCode).to.equal('AF')
  })

  it('spells names as GeoNames does where CLDR differs', () => {
    expect(countryInfo('HK').countryName).to.equal('Hong Kong')
    expect(countryInfo('CI').countryName).to.equal('Ivory Coast')
    expect(countryInfo('BA').countryName).to.equal('Bosnia and Herzegovina')
    expect(countryInfo('LC').countryName).to.equal('Saint Lucia')
  })

  it('knows every ISO 3166-1 country, and nothing for codes that are not countries', () => {
    const iso =
      'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
    const missing = iso.split(' ').filter((code) => !countryInfo(code).countryName || !countryInfo(code).continentCode)
    expect(missing).to.deep.equal([])
    expect(countryInfo('ZZ')).to.deep.equal({})
    expect(countryInfo('EU')).to.deep.equal({})
  })
})
